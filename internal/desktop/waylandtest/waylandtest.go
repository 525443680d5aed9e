// Package waylandtest starts a private headless GNOME Wayland session for
// tests: a D-Bus session bus, PipeWire with WirePlumber, mutter as a
// headless Wayland compositor with one virtual monitor, and (unless asked
// not to) the xdg-desktop-portal with its GNOME backend, all with a private
// XDG_RUNTIME_DIR and HOME, and all stopped when the test ends.
//
// It also reaches the session the way a test needs and a product must not:
// through mutter's private org.gnome.Mutter.ScreenCast and RemoteDesktop
// APIs, which need no consent. Tests use them to take a reference capture
// independent of the portal and to answer the portal's consent dialog, as
// the person at the screen would.
//
// Without the programs the test is skipped, unless
// HOSTLINK_REQUIRE_INTEGRATION is set, in which case it fails. The
// benchmark (bench/) runs sessions too, through the T interface.
package waylandtest

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/hostlink/hostlink/internal/tstest"
)

// T is what a session needs of its test: a *testing.T or *testing.B, or
// the benchmark's stand-in. Fatal and Fatalf must not return.
type T interface {
	Helper()
	Cleanup(func())
	Fatal(args ...any)
	Fatalf(format string, args ...any)
	Logf(format string, args ...any)
	Failed() bool
	TempDir() string
}

// missing ends the test for a missing dependency: through tstest.Missing
// (a skip, or a failure when integration tests are required) in tests, a
// failure elsewhere.
func missing(t T, why string) {
	t.Helper()
	if tb, ok := t.(testing.TB); ok {
		tstest.Missing(tb, why)
	}
	t.Fatal(why)
}

// waitFor polls cond until it holds, failing t after timeout.
func waitFor(t T, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	if !tstest.Eventually(timeout, cond) {
		t.Fatalf("timed out after %v waiting for %s", timeout, what)
	}
}

// Options choose what the session runs.
type Options struct {
	W, H int // the virtual monitor (default 1280x800)
	// NoPortal leaves out xdg-desktop-portal and its GNOME backend.
	NoPortal bool
	// NoRemoteDesktop runs the portal without its RemoteDesktop interface
	// (ScreenCast stays): a desktop to observe, not to act on.
	NoRemoteDesktop bool
	// ScreenshotOnly runs gnome-shell instead of bare mutter (GNOME's
	// Screenshot portal needs it) and the portal with Screenshot but
	// neither ScreenCast nor RemoteDesktop.
	ScreenshotOnly bool
}

// Session is a running headless Wayland session.
type Session struct {
	Runtime string // XDG_RUNTIME_DIR
	Home    string
	Bus     string // DBUS_SESSION_BUS_ADDRESS
	Display string // WAYLAND_DISPLAY (a socket name in Runtime)
	W, H    int

	t    T
	env  []string
	conn *dbus.Conn // the test's own connection to the session bus

	tools map[string]string // program paths, resolved at the start

	mu      sync.Mutex
	pointer *remote // mutter private remote-desktop session, made on first use
}

// tool returns the path of one of the session's programs, found when the
// session started (tests may change PATH later).
func (s *Session) tool(name string) string {
	if p, ok := s.tools[name]; ok {
		return p
	}
	return name
}

// Programs the session needs, with the Debian package that has each.
var programs = [][2]string{
	{"dbus-daemon", "dbus-daemon"},
	{"pipewire", "pipewire"},
	{"wireplumber", "wireplumber"},
	{"mutter", "mutter"},
	{"gst-launch-1.0", "gstreamer1.0-tools"},
}

// Portal programs, not on PATH.
const (
	portalBin      = "/usr/libexec/xdg-desktop-portal"
	portalGnomeBin = "/usr/libexec/xdg-desktop-portal-gnome"
)

// Start runs the session; everything it starts is stopped when the test
// ends, in reverse order.
func Start(t T, o Options) *Session {
	t.Helper()
	if o.W == 0 {
		o.W, o.H = 1280, 800
	}
	tools := map[string]string{}
	for _, p := range programs {
		path, err := exec.LookPath(p[0])
		if err != nil {
			missing(t, p[0]+" not installed (apt-get install "+p[1]+")")
		}
		tools[p[0]] = path
	}
	if !o.NoPortal {
		for _, p := range []string{portalBin, portalGnomeBin} {
			if _, err := os.Stat(p); err != nil {
				missing(t, p+" not installed (apt-get install xdg-desktop-portal xdg-desktop-portal-gnome)")
			}
		}
	}
	// A short runtime directory: unix socket paths are limited to 108 bytes.
	run, err := os.MkdirTemp("", "hlwl-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(run) })
	s := &Session{Runtime: run, Home: t.TempDir(), Display: "wayland-hl", W: o.W, H: o.H, t: t, tools: tools}
	s.stillSettings()
	s.Bus = "unix:path=" + filepath.Join(run, "bus")
	s.env = sessionEnv(os.Environ(), map[string]string{
		"XDG_RUNTIME_DIR":          run,
		"HOME":                     s.Home,
		"XDG_CURRENT_DESKTOP":      "GNOME",
		"XDG_SESSION_TYPE":         "wayland",
		"GSETTINGS_BACKEND":        "keyfile",
		"DBUS_SESSION_BUS_ADDRESS": s.Bus,
		"NO_AT_BRIDGE":             "",
	})
	services := []string{"org.a11y.Bus.service"}
	if !o.NoPortal {
		services = append(services, "org.freedesktop.impl.portal.PermissionStore.service")
	}
	s.startBus(services)
	conn, err := dbus.Connect(s.Bus)
	if err != nil {
		t.Fatalf("session bus: %v", err)
	}
	s.conn = conn
	t.Cleanup(func() { conn.Close() })
	s.waitFile(s.background("pipewire"), filepath.Join(run, "pipewire-0"))
	s.background("wireplumber")
	compositor := "mutter"
	if o.ScreenshotOnly {
		// gnome-shell also wants a system bus; a private one will do.
		compositor = s.shell()
	}
	shell := s.background(compositor, "--headless", "--wayland", "--no-x11",
		"--virtual-monitor", fmt.Sprintf("%dx%d", o.W, o.H), "--wayland-display", s.Display)
	s.waitFile(shell, filepath.Join(run, s.Display))
	s.waitName(shell, "org.gnome.Mutter.ScreenCast")
	if o.ScreenshotOnly {
		s.waitName(shell, "org.gnome.Shell.Screenshot")
	}
	s.env = append(s.env, "WAYLAND_DISPLAY="+s.Display)
	if !o.NoPortal {
		s.waitName(s.background(portalGnomeBin), "org.freedesktop.impl.portal.desktop.gnome")
		switch {
		case o.NoRemoteDesktop:
			s.portalWithout("org.freedesktop.impl.portal.RemoteDesktop")
		case o.ScreenshotOnly:
			s.portalWithout("org.freedesktop.impl.portal.RemoteDesktop", "org.freedesktop.impl.portal.ScreenCast")
			// The Screenshot portal asks through the Access portal,
			// which GNOME's GTK backend implements.
			s.waitName(s.background("/usr/libexec/xdg-desktop-portal-gtk"), "org.freedesktop.impl.portal.desktop.gtk")
		}
		s.waitName(s.background(portalBin), "org.freedesktop.portal.Desktop")
	}
	if o.ScreenshotOnly {
		s.leaveOverview()
	}
	return s
}

// stillSettings prepares the private HOME so that nothing moves on the
// screen but what a test does: animations off in the session's settings
// (GSettings' keyfile backend), so that a dialog is gone, and a
// screenshot's flash over, in the frame after the event, not at a time a
// loaded machine makes unpredictable; notification banners off, since
// gnome-shell greets a session run as root with a "Logged in as a
// privileged user" banner that covers the top of the screen for seconds
// after start (a screenshot taken with it and a reference taken after it
// went differ); and gnome-shell's one-time "Screen Lock disabled" banner
// (shown without GDM) marked as shown already.
func (s *Session) stillSettings() {
	s.t.Helper()
	files := map[string]string{
		filepath.Join(s.Home, ".config", "glib-2.0", "settings", "keyfile"):           "[org/gnome/desktop/interface]\nenable-animations=false\n\n[org/gnome/desktop/notifications]\nshow-banners=false\n",
		filepath.Join(s.Home, ".local", "share", "gnome-shell", "lock-warning-shown"): "",
	}
	for path, content := range files {
		if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
			s.t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o600); err != nil {
			s.t.Fatal(err)
		}
	}
}

// shell returns gnome-shell's path, with a private system bus for it in
// the session's environment.
func (s *Session) shell() string {
	s.t.Helper()
	path, err := exec.LookPath("gnome-shell")
	if err != nil {
		missing(s.t, "gnome-shell not installed (apt-get install gnome-shell)")
	}
	sys := "unix:path=" + filepath.Join(s.Runtime, "system_bus")
	s.startBusAt(sys, "system_services", nil)
	s.env = append(s.env, "DBUS_SYSTEM_BUS_ADDRESS="+sys)
	return path
}

// portalWithout points xdg-desktop-portal (XDG_DESKTOP_PORTAL_DIR) at
// copies of the GNOME and GTK backends' descriptions that lack ifaces.
func (s *Session) portalWithout(ifaces ...string) {
	s.t.Helper()
	dir := filepath.Join(s.Runtime, "portals")
	if err := os.Mkdir(dir, 0o700); err != nil {
		s.t.Fatal(err)
	}
	for _, name := range []string{"gnome.portal", "gtk.portal"} {
		desc := filepath.Join("/usr/share/xdg-desktop-portal/portals", name)
		b, err := os.ReadFile(desc)
		if err != nil {
			missing(s.t, desc+": "+err.Error())
		}
		out := string(b)
		for _, iface := range ifaces {
			out = strings.ReplaceAll(out, iface+";", "")
		}
		if err := os.WriteFile(filepath.Join(dir, name), []byte(out), 0o600); err != nil {
			s.t.Fatal(err)
		}
	}
	s.env = append(s.env, "XDG_DESKTOP_PORTAL_DIR="+dir)
}

// sessionEnv is parent without the variables that would reach the real
// session, with set on top.
func sessionEnv(parent []string, set map[string]string) []string {
	drop := []string{"DISPLAY", "WAYLAND_DISPLAY", "DBUS_SESSION_BUS_ADDRESS", "DBUS_SYSTEM_BUS_ADDRESS",
		"XDG_RUNTIME_DIR", "HOME", "XDG_CURRENT_DESKTOP", "XDG_SESSION_TYPE", "PIPEWIRE_REMOTE",
		"XDG_CONFIG_HOME", "XDG_DATA_HOME", "XDG_CACHE_HOME", "XDG_STATE_HOME"}
	var out []string
	for _, kv := range parent {
		k, _, _ := strings.Cut(kv, "=")
		keep := true
		for _, d := range drop {
			keep = keep && k != d
		}
		if _, ok := set[k]; ok {
			keep = false
		}
		if keep {
			out = append(out, kv)
		}
	}
	for k, v := range set {
		if v != "" {
			out = append(out, k+"="+v)
		}
	}
	return out
}

// Env is the environment of programs in the session.
func (s *Session) Env() []string { return s.env }

// Getenv reads a variable of the session's environment.
func (s *Session) Getenv(name string) string {
	for _, kv := range s.env {
		if k, v, ok := strings.Cut(kv, "="); ok && k == name {
			return v
		}
	}
	return ""
}

// proc is a program background started.
type proc struct {
	name string
	cmd  *exec.Cmd
	out  *syncBuffer
	done chan struct{} // closed once it exited
	err  error         // its exit, once done is closed
}

// exited reports whether p ended, with what it wrote, so that a wait for
// something p should do stops at once when p is gone.
func (p *proc) exited() (string, bool) {
	select {
	case <-p.done:
		return fmt.Sprintf("%s exited (%v) with this output:\n%s", filepath.Base(p.name), p.err, p.out.tail(4096)), true
	default:
		return "", false
	}
}

// background starts a program in the session, stopped when the test ends.
// Its output goes to a log kept in the test's temporary directory and shown
// if the test fails.
func (s *Session) background(name string, args ...string) *proc {
	s.t.Helper()
	p := &proc{name: name, cmd: exec.Command(s.tool(name), args...), out: &syncBuffer{}, done: make(chan struct{})}
	cmd := p.cmd
	cmd.Env = s.env
	cmd.Dir = s.Home
	cmd.Stdout, cmd.Stderr = p.out, p.out
	dieWithTest(cmd)
	// A child it leaves behind may hold the output pipe open: Wait stops
	// waiting for that output a second after the process itself ends.
	cmd.WaitDelay = time.Second
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("%s: %v", name, err)
	}
	go func() { p.err = cmd.Wait(); close(p.done) }()
	s.t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-p.done:
		case <-time.After(5 * time.Second):
			cmd.Process.Kill()
			<-p.done
		}
		if s.t.Failed() {
			s.t.Logf("--- %s output:\n%s", filepath.Base(name), p.out.tail(4096))
		}
	})
	return p
}

// busConfig is a session bus that can start only the services in
// its own directory, so that the system's (a portal among them) stay out
// unless a test starts them itself.
const busConfig = `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>session</type>
  <keep_umask/>
  <listen>%s</listen>
  <auth>EXTERNAL</auth>
  <servicedir>%s</servicedir>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
`

// startBus runs the session bus, which can start the system's services
// named (service file names), and returns once it listens: it prints its
// address then.
func (s *Session) startBus(services []string) {
	s.t.Helper()
	s.startBusAt(s.Bus, "services", services)
}

// startBusAt runs a bus at address with its service directory dir (in
// the runtime directory).
func (s *Session) startBusAt(address, dir string, services []string) {
	s.t.Helper()
	dir = filepath.Join(s.Runtime, dir)
	if err := os.Mkdir(dir, 0o700); err != nil {
		s.t.Fatal(err)
	}
	for _, name := range services {
		src := filepath.Join("/usr/share/dbus-1/services", name)
		if _, err := os.Stat(src); err == nil {
			if err := os.Symlink(src, filepath.Join(dir, name)); err != nil {
				s.t.Fatal(err)
			}
		}
	}
	config := dir + ".conf"
	if err := os.WriteFile(config, []byte(fmt.Sprintf(busConfig, address, dir)), 0o600); err != nil {
		s.t.Fatal(err)
	}
	r, w, err := os.Pipe()
	if err != nil {
		s.t.Fatal(err)
	}
	cmd := exec.Command(s.tool("dbus-daemon"), "--config-file="+config, "--nofork", "--print-address=3")
	cmd.Env = s.env
	cmd.ExtraFiles = []*os.File{w}
	dieWithTest(cmd)
	if err := cmd.Start(); err != nil {
		s.t.Fatalf("dbus-daemon: %v", err)
	}
	w.Close()
	s.t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line := make(chan string, 1)
	go func() {
		l, _ := bufio.NewReader(r).ReadString('\n')
		r.Close()
		line <- l
	}()
	select {
	case l := <-line:
		if strings.TrimSpace(l) == "" {
			s.t.Fatal("dbus-daemon exited without listening")
		}
	case <-time.After(time.Minute):
		s.t.Fatal("dbus-daemon did not start within a minute")
	}
}

// Background starts a program in the session, stopped when the test ends.
func (s *Session) Background(name string, args ...string) *exec.Cmd {
	s.t.Helper()
	return s.background(name, args...).cmd
}

// waitFile waits for p to create path.
func (s *Session) waitFile(p *proc, path string) {
	s.t.Helper()
	s.waitBy(p, filepath.Base(p.name)+" to create "+filepath.Base(path), func() bool {
		_, err := os.Stat(path)
		return err == nil
	})
}

// waitName waits for p to own name on the session bus.
func (s *Session) waitName(p *proc, name string) {
	s.t.Helper()
	s.waitBy(p, name+" on the session bus", func() bool {
		var has bool
		err := s.conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, name).Store(&has)
		return err == nil && has
	})
}

// waitBy waits for cond, which p brings about: it fails at once, with p's
// output, when p exits first.
func (s *Session) waitBy(p *proc, what string, cond func() bool) {
	s.t.Helper()
	var gone string
	waitFor(s.t, 2*time.Minute, what, func() bool {
		if cond() {
			return true
		}
		why, ok := p.exited()
		gone = why
		return ok
	})
	if gone != "" && !cond() {
		s.t.Fatalf("waiting for %s: %s", what, gone)
	}
}

// Terminal starts weston-terminal running sh in dir, and returns once its
// window is on the screen (its pixels differ from the empty desktop).
func (s *Session) Terminal(dir string) {
	s.t.Helper()
	bin, err := exec.LookPath("weston-terminal")
	if err != nil {
		missing(s.t, "weston-terminal not installed (apt-get install weston)")
	}
	empty := s.Capture()
	cmd := exec.Command(bin, "--font=DejaVuSansMono", "--font-size=20", "--shell=/bin/sh")
	cmd.Dir = dir
	cmd.Env = append(s.env, "PS1=$ ", "ENV=", "SHELL=/bin/sh")
	dieWithTest(cmd)
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	waitFor(s.t, 2*time.Minute, "the terminal's window", func() bool {
		return Differ(s.Capture(), empty, 0, 0) > 1000
	})
}

// Output runs a program in the session and returns its standard output.
func (s *Session) Output(name string, args ...string) (string, error) {
	return tstest.Output(s.env, name, args...)
}

// syncBuffer is a bytes.Buffer safe for a process's two streams.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (b *syncBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.b.Len() > 1<<20 {
		return len(p), nil
	}
	return b.b.Write(p)
}

func (b *syncBuffer) tail(n int) string {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := b.b.String()
	if len(s) > n {
		s = s[len(s)-n:]
	}
	sc := bufio.NewScanner(strings.NewReader(s))
	var lines []string
	for sc.Scan() {
		lines = append(lines, "  "+sc.Text())
	}
	return strings.Join(lines, "\n")
}

// GtkApp starts a GTK 3 window titled title with one button labelled
// label, as a native Wayland client, through Debian's python3 with
// PyGObject, so that it registers with AT-SPI on the session bus.
func (s *Session) GtkApp(title, label string) {
	s.t.Helper()
	const py = "/usr/bin/python3"
	if err := exec.Command(py, "-c", `import gi; gi.require_version("Gtk", "3.0"); from gi.repository import Gtk`).Run(); err != nil {
		missing(s.t, py+" with PyGObject and GTK 3 (python3-gi, gir1.2-gtk-3.0) is required: "+err.Error())
	}
	script := filepath.Join(s.t.TempDir(), "app.py")
	src := fmt.Sprintf(`import gi
gi.require_version("Gtk", "3.0")
from gi.repository import Gtk
w = Gtk.Window(title=%q)
w.add(Gtk.Button(label=%q))
w.connect("destroy", Gtk.main_quit)
w.show_all()
Gtk.main()
`, title, label)
	if err := os.WriteFile(script, []byte(src), 0o600); err != nil {
		s.t.Fatal(err)
	}
	cmd := exec.Command(py, script)
	cmd.Env = append(s.env, "GDK_BACKEND=wayland")
	dieWithTest(cmd)
	if err := cmd.Start(); err != nil {
		s.t.Fatal(err)
	}
	s.t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
}
