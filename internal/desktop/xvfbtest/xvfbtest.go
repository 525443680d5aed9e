// Package xvfbtest starts a private X11 desktop for tests: Xvfb on a free
// display number, an EWMH window manager (openbox or fluxbox) and, on
// request, xterm. It also reads the screen independently of hostlink, with
// xwd and netpbm, so tests can compare pixels.
//
// Without Xvfb the test is skipped, unless HOSTLINK_REQUIRE_INTEGRATION is
// set, in which case it fails.
package xvfbtest

import (
	"bufio"
	"bytes"
	"fmt"
	"image"
	"image/color"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/xproto"

	"github.com/hostlink/hostlink/internal/tstest"
)

// Display is a running Xvfb with a window manager.
type Display struct {
	Name string    // ":N"
	WM   *exec.Cmd // the window manager
	xvfb *exec.Cmd
	t    testing.TB
	env  []string
}

// Need returns the path of tool or ends the test through tstest.Tool.
func Need(t testing.TB, tool string) string {
	t.Helper()
	return tstest.Tool(t, tool)
}

// Start runs Xvfb with one screen of w×h pixels and a window manager, all
// stopped when the test ends.
func Start(t testing.TB, w, h int) *Display {
	t.Helper()
	xvfb := Need(t, "Xvfb")
	r, wr, err := os.Pipe()
	if err != nil {
		t.Fatal(err)
	}
	// -displayfd: Xvfb picks a free display number and writes it to fd 3.
	cmd := exec.Command(xvfb, "-displayfd", "3", "-screen", "0", fmt.Sprintf("%dx%dx24", w, h),
		"-nolisten", "tcp", "-noreset", "+extension", "RANDR")
	cmd.ExtraFiles = []*os.File{wr}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	wr.Close()
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(r).ReadString('\n')
		line <- strings.TrimSpace(s)
		r.Close()
	}()
	var n string
	select {
	case n = <-line:
	case <-time.After(30 * time.Second):
	}
	if _, err := strconv.Atoi(n); err != nil {
		t.Fatalf("Xvfb did not start: %q %s", n, stderr.String())
	}
	d := &Display{Name: ":" + n, t: t, xvfb: cmd}
	d.env = append(os.Environ(), "DISPLAY="+d.Name)
	d.env = withoutEnv(d.env, "DBUS_SESSION_BUS_ADDRESS", "WAYLAND_DISPLAY")
	d.startWM()
	return d
}

func withoutEnv(env []string, names ...string) []string {
	var out []string
outer:
	for _, e := range env {
		for _, n := range names {
			if strings.HasPrefix(e, n+"=") {
				continue outer
			}
		}
		out = append(out, e)
	}
	return out
}

// startWM starts openbox (or fluxbox) and waits until it takes on new
// windows.
func (d *Display) startWM() {
	d.t.Helper()
	var wm string
	for _, c := range []string{"openbox", "fluxbox"} {
		if p, err := exec.LookPath(c); err == nil {
			wm = p
			break
		}
	}
	if wm == "" {
		Need(d.t, "openbox")
	}
	d.WM = d.Background(wm)
	d.waitManaging()
}

// waitManaging waits until the window manager takes on new windows: it
// maps a window of its own, waits until the window is in the client list,
// and destroys it. The EWMH check property is no sign of that: openbox
// sets it early in its start and loads its theme and fonts before it
// handles map requests, seconds later on a busy machine; a window mapped
// in between waits, and openbox does not focus a window it takes on while
// it starts.
func (d *Display) waitManaging() {
	d.t.Helper()
	conn, err := xgb.NewConnDisplay(d.Name)
	if err != nil {
		d.t.Fatal(err)
	}
	defer conn.Close()
	screen := xproto.Setup(conn).DefaultScreen(conn)
	wid, err := xproto.NewWindowId(conn)
	if err != nil {
		d.t.Fatal(err)
	}
	if err := xproto.CreateWindowChecked(conn, screen.RootDepth, wid, screen.Root, 0, 0, 1, 1, 0,
		xproto.WindowClassInputOutput, screen.RootVisual, 0, nil).Check(); err != nil {
		d.t.Fatal(err)
	}
	list, err := xproto.InternAtom(conn, false, uint16(len("_NET_CLIENT_LIST")), "_NET_CLIENT_LIST").Reply()
	if err != nil {
		d.t.Fatal(err)
	}
	listed := func() bool {
		r, err := xproto.GetProperty(conn, false, screen.Root, list.Atom, xproto.AtomWindow, 0, 1<<16).Reply()
		if err != nil {
			return false
		}
		for i := 0; i+4 <= len(r.Value); i += 4 {
			if xproto.Window(xgb.Get32(r.Value[i:])) == wid {
				return true
			}
		}
		return false
	}
	if err := xproto.MapWindowChecked(conn, wid).Check(); err != nil {
		d.t.Fatal(err)
	}
	d.Eventually("the window manager to take on windows", listed)
	if err := xproto.DestroyWindowChecked(conn, wid).Check(); err != nil {
		d.t.Fatal(err)
	}
	d.Eventually("the window manager to let go of its probe window", func() bool { return !listed() })
}

// Kill ends the X server at once, as a crash or the end of the session
// would: every client's connection is cut.
func (d *Display) Kill() {
	d.xvfb.Process.Kill()
}

// Env is the environment of programs on this display.
func (d *Display) Env() []string { return d.env }

// Background starts a program on the display, killed when the test ends.
func (d *Display) Background(name string, args ...string) *exec.Cmd {
	d.t.Helper()
	cmd := exec.Command(name, args...)
	cmd.Env = d.env
	if err := cmd.Start(); err != nil {
		d.t.Fatalf("%s: %v", name, err)
	}
	d.t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	return cmd
}

// Output runs a program on the display and returns its standard output.
func (d *Display) Output(name string, args ...string) (string, error) {
	return tstest.Output(d.env, name, args...)
}

// Run runs a program on the display and fails the test if it fails.
func (d *Display) Run(name string, args ...string) string {
	d.t.Helper()
	out, err := d.Output(name, args...)
	if err != nil {
		d.t.Fatal(err)
	}
	return out
}

// Eventually waits up to 20 s for cond, which the X server or a client
// makes true with no event to wait on (see tstest.WaitFor).
func (d *Display) Eventually(what string, cond func() bool) {
	d.t.Helper()
	tstest.WaitFor(d.t, 20*time.Second, what, cond)
}

// Xterm starts an xterm titled title at (x, y) running sh in dir, and
// returns its X window id once the window manager has mapped it.
func (d *Display) Xterm(title string, x, y int, dir string) string {
	d.t.Helper()
	Need(d.t, "xterm")
	Need(d.t, "xdotool")
	cmd := exec.Command("xterm", "-T", title, "-geometry", fmt.Sprintf("80x24+%d+%d", x, y),
		"-fg", "black", "-bg", "white", "-e", "/bin/sh")
	cmd.Dir = dir
	cmd.Env = append(d.env, "PS1=$ ", "HOME="+dir, "ENV=")
	if err := cmd.Start(); err != nil {
		d.t.Fatal(err)
	}
	d.t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	var id string
	d.Eventually("xterm "+title, func() bool {
		out, err := d.Output("xdotool", "search", "--name", "^"+title+"$")
		id = strings.TrimSpace(out)
		return err == nil && id != ""
	})
	id = strings.Fields(id)[0]
	d.Managed(id, title)
	return id
}

// Managed waits until the window manager has taken on the new window id
// (named what in failures) and made it the active window: it is in the
// client list and focused. After this the desktop is quiet. A window
// found by name may not be managed yet (a search also finds windows whose
// map request the window manager has not handled), and activating it then
// does nothing; and openbox does not focus a window it takes on while it
// is still starting, so a managed window that is not active is activated
// as a pager would.
func (d *Display) Managed(id, what string) {
	d.t.Helper()
	Need(d.t, "xdotool")
	Need(d.t, "xprop")
	n, _ := strconv.ParseUint(id, 10, 64)
	hex := fmt.Sprintf("0x%x", n)
	d.Eventually(what+" managed and focused", func() bool {
		out, err := d.Output("xprop", "-root", "_NET_CLIENT_LIST", "_NET_ACTIVE_WINDOW")
		if err != nil {
			return false
		}
		managed, active := false, false
		for _, l := range strings.Split(out, "\n") {
			_, ids, _ := strings.Cut(l, "#")
			for _, w := range strings.Split(ids, ",") {
				if strings.TrimSpace(w) == hex {
					managed = managed || strings.HasPrefix(l, "_NET_CLIENT_LIST(")
					active = active || strings.HasPrefix(l, "_NET_ACTIVE_WINDOW(")
				}
			}
		}
		if managed && !active {
			d.Output("xdotool", "windowactivate", id)
		}
		return managed && active
	})
}

// XWD captures the root window with xwd and converts it with netpbm's
// xwdtopnm: an independent reading of the screen.
func (d *Display) XWD() *image.RGBA {
	d.t.Helper()
	Need(d.t, "xwd")
	Need(d.t, "xwdtopnm")
	dir := d.t.TempDir()
	xwdFile := filepath.Join(dir, "root.xwd")
	d.Run("xwd", "-root", "-silent", "-out", xwdFile)
	out, err := exec.Command("xwdtopnm", xwdFile).Output()
	if err != nil {
		d.t.Fatalf("xwdtopnm: %v", err)
	}
	img, err := ParsePPM(out)
	if err != nil {
		d.t.Fatal(err)
	}
	return img
}

// Still runs capture between two screenshots of the root window until the
// two are the same, and returns that screen: what capture saw is then the
// screen as it was. A program may still be drawing when its window is
// mapped and focused (an xterm's shell prompt arrives later, much later
// on a busy machine), so comparing a capture with one screenshot taken
// after it races with that drawing.
func (d *Display) Still(capture func()) *image.RGBA {
	d.t.Helper()
	var after *image.RGBA
	d.Eventually("a still screen around a capture", func() bool {
		before := d.XWD()
		capture()
		after = d.XWD()
		return bytes.Equal(before.Pix, after.Pix)
	})
	return after
}

// ParsePPM decodes a binary (P6, maxval 255) PPM.
func ParsePPM(b []byte) (*image.RGBA, error) {
	var w, h, maxv int
	fields := 0
	i := 0
	var vals [4]string
	for fields < 4 && i < len(b) {
		for i < len(b) && (b[i] == ' ' || b[i] == '\n' || b[i] == '\t' || b[i] == '\r') {
			i++
		}
		if i < len(b) && b[i] == '#' {
			for i < len(b) && b[i] != '\n' {
				i++
			}
			continue
		}
		j := i
		for j < len(b) && b[j] != ' ' && b[j] != '\n' && b[j] != '\t' && b[j] != '\r' {
			j++
		}
		vals[fields] = string(b[i:j])
		fields++
		i = j
	}
	i++ // the single whitespace after maxval
	if vals[0] != "P6" {
		return nil, fmt.Errorf("not a P6 PPM: %q", vals[0])
	}
	w, _ = strconv.Atoi(vals[1])
	h, _ = strconv.Atoi(vals[2])
	maxv, _ = strconv.Atoi(vals[3])
	if maxv != 255 || len(b)-i < w*h*3 {
		return nil, fmt.Errorf("PPM %dx%d maxval %d with %d bytes", w, h, maxv, len(b)-i)
	}
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	px := b[i:]
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			o := (y*w + x) * 3
			img.SetRGBA(x, y, color.RGBA{px[o], px[o+1], px[o+2], 255})
		}
	}
	return img, nil
}

// SessionBus starts a private D-Bus session bus for the display's programs
// and returns its address; the caller points DBUS_SESSION_BUS_ADDRESS at
// it. Services it activates (the AT-SPI bus) die with it.
func (d *Display) SessionBus() string {
	d.t.Helper()
	bin := Need(d.t, "dbus-daemon")
	cmd := exec.Command(bin, "--session", "--nofork", "--print-address=1")
	cmd.Env = d.env
	out, err := cmd.StdoutPipe()
	if err != nil {
		d.t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		d.t.Fatal(err)
	}
	d.t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	line, err := bufio.NewReader(out).ReadString('\n')
	addr := strings.TrimSpace(line)
	if err != nil || addr == "" {
		d.t.Fatalf("dbus-daemon gave no address: %v", err)
	}
	d.env = append(withoutEnv(d.env, "DBUS_SESSION_BUS_ADDRESS"), "DBUS_SESSION_BUS_ADDRESS="+addr)
	return addr
}

// GtkApp starts a GTK 3 window titled title with one button labelled
// label, through Debian's python3 with PyGObject, so that it registers
// with AT-SPI on the display's session bus.
func (d *Display) GtkApp(title, label string) {
	d.t.Helper()
	const py = "/usr/bin/python3"
	script := filepath.Join(d.t.TempDir(), "app.py")
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
		d.t.Fatal(err)
	}
	if err := exec.Command(py, "-c", `import gi; gi.require_version("Gtk", "3.0"); from gi.repository import Gtk`).Run(); err != nil {
		tstest.Missing(d.t, fmt.Sprintf("no GTK 3 for %s (apt-get install python3-gi gir1.2-gtk-3.0): %v", py, err))
	}
	d.Background(py, script)
}
