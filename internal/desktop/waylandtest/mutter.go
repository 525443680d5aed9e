package waylandtest

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/color"
	"image/draw"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"time"

	"github.com/godbus/dbus/v5"
)

// Mutter's private APIs (mutter/data/dbus-interfaces): what GNOME's own
// portal backend uses underneath, reachable by any client of the session
// bus, with no consent.
const (
	mutterSC      = "org.gnome.Mutter.ScreenCast"
	mutterSCPath  = "/org/gnome/Mutter/ScreenCast"
	mutterRD      = "org.gnome.Mutter.RemoteDesktop"
	mutterRDPath  = "/org/gnome/Mutter/RemoteDesktop"
	callTimeout   = 10 * time.Second
	streamTimeout = time.Minute
)

func (s *Session) call(o dbus.BusObject, method string, args ...any) *dbus.Call {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	return o.CallWithContext(ctx, method, 0, args...)
}

// record starts a private screen-cast session of the whole monitor (on the
// remote-desktop session rdID, if not "") and returns the session and its
// PipeWire node.
func (s *Session) record(rdID string, start func() error) (dbus.ObjectPath, dbus.ObjectPath, uint32) {
	s.t.Helper()
	props := map[string]dbus.Variant{}
	if rdID != "" {
		props["remote-desktop-session-id"] = dbus.MakeVariant(rdID)
	}
	var sess dbus.ObjectPath
	if err := s.call(s.conn.Object(mutterSC, mutterSCPath), mutterSC+".CreateSession", props).Store(&sess); err != nil {
		s.t.Fatalf("Mutter ScreenCast.CreateSession: %v", err)
	}
	var stream dbus.ObjectPath
	// cursor-mode 0: hidden, as hostlink asks the portal for.
	if err := s.call(s.conn.Object(mutterSC, sess), mutterSC+".Session.RecordMonitor", "",
		map[string]dbus.Variant{"cursor-mode": dbus.MakeVariant(uint32(0))}).Store(&stream); err != nil {
		s.t.Fatalf("Mutter RecordMonitor: %v", err)
	}
	sig := make(chan *dbus.Signal, 8)
	s.conn.Signal(sig)
	defer s.conn.RemoveSignal(sig)
	match := []dbus.MatchOption{dbus.WithMatchObjectPath(stream), dbus.WithMatchInterface(mutterSC + ".Stream"), dbus.WithMatchMember("PipeWireStreamAdded")}
	if err := s.conn.AddMatchSignal(match...); err != nil {
		s.t.Fatal(err)
	}
	defer s.conn.RemoveMatchSignal(match...)
	if start == nil {
		start = func() error { return s.call(s.conn.Object(mutterSC, sess), mutterSC+".Session.Start").Err }
	}
	if err := start(); err != nil {
		s.t.Fatalf("Mutter session Start: %v", err)
	}
	deadline := time.After(streamTimeout)
	for {
		select {
		case v := <-sig:
			if v.Path == stream && v.Name == mutterSC+".Stream.PipeWireStreamAdded" && len(v.Body) == 1 {
				return sess, stream, v.Body[0].(uint32)
			}
		case <-deadline:
			s.t.Fatalf("no PipeWire stream from Mutter within %v", streamTimeout)
		}
	}
}

// Capture reads the whole screen through mutter's private screen cast and
// GStreamer, independently of the portal and of hostlink.
func (s *Session) Capture() *image.RGBA {
	s.t.Helper()
	sess, _, node := s.record("", nil)
	defer s.call(s.conn.Object(mutterSC, sess), mutterSC+".Session.Stop")
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, s.tool("gst-launch-1.0"), "-q", "pipewiresrc", "path="+strconv.Itoa(int(node)),
		"num-buffers=1", "!", "videoconvert", "!", "pngenc", "!", "fdsink", "fd=1")
	cmd.Env = s.env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		s.t.Fatalf("reference capture: %v: %s", err, stderr.String())
	}
	img, err := png.Decode(bytes.NewReader(out))
	if err != nil {
		s.t.Fatalf("reference capture: %v", err)
	}
	rgba := image.NewRGBA(img.Bounds())
	draw.Draw(rgba, rgba.Rect, img, img.Bounds().Min, draw.Src)
	return rgba
}

// remote is a private remote-desktop session with a stream of the
// monitor, for absolute pointer motion.
type remote struct {
	rd, sc, stream dbus.ObjectPath
	node           uint32
}

// input returns the test's remote-desktop session, starting it on first
// use.
func (s *Session) input() *remote {
	s.t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.pointer != nil {
		return s.pointer
	}
	var rd dbus.ObjectPath
	if err := s.call(s.conn.Object(mutterRD, mutterRDPath), mutterRD+".CreateSession").Store(&rd); err != nil {
		s.t.Fatalf("Mutter RemoteDesktop.CreateSession: %v", err)
	}
	v, err := s.conn.Object(mutterRD, rd).GetProperty(mutterRD + ".Session.SessionId")
	if err != nil {
		s.t.Fatalf("SessionId: %v", err)
	}
	sc, stream, node := s.record(v.Value().(string), func() error {
		return s.call(s.conn.Object(mutterRD, rd), mutterRD+".Session.Start").Err
	})
	r := &remote{rd: rd, sc: sc, stream: stream, node: node}
	s.t.Cleanup(func() { s.call(s.conn.Object(mutterRD, rd), mutterRD+".Session.Stop") })
	// A new virtual device drops the events that reach the compositor
	// before it has set the device up, and nothing reports when that is
	// done: one key and one motion, then a pause, as hostlink does itself.
	o := s.conn.Object(mutterRD, rd)
	s.call(o, mutterRD+".Session.NotifyKeyboardKeysym", uint32(0xffe1), true)
	s.call(o, mutterRD+".Session.NotifyKeyboardKeysym", uint32(0xffe1), false)
	s.call(o, mutterRD+".Session.NotifyPointerMotionAbsolute", string(stream), 1.0, 1.0)
	time.Sleep(300 * time.Millisecond)
	s.pointer = r
	return r
}

// Click presses and releases the left button at (x, y) of the screen,
// through mutter's private remote desktop.
func (s *Session) Click(x, y int) {
	s.t.Helper()
	r := s.input()
	o := s.conn.Object(mutterRD, r.rd)
	const btnLeft = 0x110
	for _, c := range []struct {
		m    string
		args []any
	}{
		{"NotifyPointerMotionAbsolute", []any{string(r.stream), float64(x), float64(y)}},
		{"NotifyPointerButton", []any{int32(btnLeft), true}},
		{"NotifyPointerButton", []any{int32(btnLeft), false}},
	} {
		if err := s.call(o, mutterRD+".Session."+c.m, c.args...).Err; err != nil {
			s.t.Fatalf("%s: %v", c.m, err)
		}
	}
}

// Differ counts pixels of a that differ from b at offset (ox, oy).
func Differ(a, b *image.RGBA, ox, oy int) int {
	n, _ := differ(a, b, ox, oy)
	return n
}

// differ is Differ with the bounds (in a) of the pixels that differ.
func differ(a, b *image.RGBA, ox, oy int) (int, image.Rectangle) {
	n := 0
	var box image.Rectangle
	for y := 0; y < a.Rect.Dy(); y++ {
		for x := 0; x < a.Rect.Dx(); x++ {
			p, q := a.RGBAAt(x, y), b.RGBAAt(x+ox, y+oy)
			if p.R != q.R || p.G != q.G || p.B != q.B {
				n++
				box = box.Union(image.Rect(x, y, x+1, y+1))
			}
		}
	}
	return n, box
}

// Same fails t when a differs from b (at offset ox, oy) in any pixel,
// saying where, with both images saved as PNG files to look at.
func Same(t T, what string, a, b *image.RGBA, ox, oy int) {
	t.Helper()
	n, box := differ(a, b, ox, oy)
	if n == 0 {
		return
	}
	dir, err := os.MkdirTemp("", "hostlink-differ-")
	if err == nil {
		for name, img := range map[string]*image.RGBA{"got.png": a, "want.png": b} {
			if f, err := os.Create(filepath.Join(dir, name)); err == nil {
				png.Encode(f, img)
				f.Close()
			}
		}
	}
	t.Fatalf("%s: %d pixels differ, within %v; the images are in %s", what, n, box, dir)
}

// String describes the session for logs.
func (s *Session) String() string {
	return fmt.Sprintf("wayland session %s (%dx%d, bus %s)", s.Display, s.W, s.H, s.Bus)
}

// The GNOME portal's consent dialog, centred on the monitor: its buttons'
// offsets from the screen's centre (xdg-desktop-portal-gnome 43).
var (
	shareButton  = [2]int{212, -128}
	cancelButton = [2]int{-210, -128}
	allowInput   = [2]int{189, 72} // the "Allow remote interaction" switch
	monitorRow   = [2]int{0, 26}   // the monitor in the screen-cast-only dialog
)

func (s *Session) at(off [2]int) (int, int) { return s.W/2 + off[0], s.H/2 + off[1] }

// DialogShown reports whether the portal's consent dialog is on the
// screen: its Share button's blue, bright or (until a monitor is chosen)
// pale, is where it belongs.
func (s *Session) DialogShown() bool {
	s.t.Helper()
	x, y := s.at(shareButton)
	c := s.Capture().RGBAAt(x, y)
	return blue(c) || (c.B > 220 && int(c.B) > int(c.R)+60)
}

// blue is the GNOME accent blue of the dialog's Share button and switch.
func blue(c color.RGBA) bool { return c.B > 180 && c.R < 100 && c.G > 100 && c.G < 160 }

// AllowCast answers the screen-cast-only dialog (a portal without
// RemoteDesktop): it chooses the monitor, then shares.
func (s *Session) AllowCast() {
	s.t.Helper()
	s.AwaitDialog()
	s.Click(s.at(monitorRow))
	x, y := s.at(shareButton)
	waitFor(s.t, 2*time.Minute, "the Share button to be enabled", func() bool { return blue(s.Capture().RGBAAt(x, y)) })
	s.Click(x, y)
	waitFor(s.t, 2*time.Minute, "the consent dialog to close", func() bool { return !s.DialogShown() })
}

// AwaitDialog waits until the portal's consent dialog is on the screen.
func (s *Session) AwaitDialog() {
	s.t.Helper()
	waitFor(s.t, 2*time.Minute, "the portal's consent dialog", s.DialogShown)
}

// Allow answers the portal's consent dialog as the person at the screen
// would: it allows remote interaction if input is true, then shares.
func (s *Session) Allow(input bool) {
	s.t.Helper()
	s.AwaitDialog()
	if input {
		s.Click(s.at(allowInput))
		// The switch's left half turns blue once GTK has taken the click.
		x, y := s.at(allowInput)
		waitFor(s.t, 2*time.Minute, "the remote-interaction switch", func() bool {
			return blue(s.Capture().RGBAAt(x-14, y))
		})
	}
	s.Click(s.at(shareButton))
	waitFor(s.t, 2*time.Minute, "the consent dialog to close", func() bool { return !s.DialogShown() })
}

// Decline answers the portal's consent dialog with Cancel.
func (s *Session) Decline() {
	s.t.Helper()
	s.AwaitDialog()
	s.Click(s.at(cancelButton))
	waitFor(s.t, 2*time.Minute, "the consent dialog to close", func() bool { return !s.DialogShown() })
}

// Rotate turns the monitor a quarter (its logical size becomes H×W), as a
// resolution change does: through mutter's DisplayConfig, temporarily.
func (s *Session) Rotate() {
	s.t.Helper()
	const name, path = "org.gnome.Mutter.DisplayConfig", "/org/gnome/Mutter/DisplayConfig"
	o := s.conn.Object(name, path)
	var (
		serial   uint32
		monitors []struct {
			ID struct {
				Connector, Vendor, Product, Serial string
			}
			Modes []struct {
				ID      string
				W, H    int32
				Refresh float64
				Scale   float64
				Scales  []float64
				Props   map[string]dbus.Variant
			}
			Props map[string]dbus.Variant
		}
		logical []any
		props   map[string]dbus.Variant
	)
	if err := s.call(o, name+".GetCurrentState").Store(&serial, &monitors, &logical, &props); err != nil {
		s.t.Fatalf("DisplayConfig.GetCurrentState: %v", err)
	}
	m := monitors[0]
	type monitorMode struct {
		Connector, Mode string
		Props           map[string]dbus.Variant
	}
	type logicalMonitor struct {
		X, Y      int32
		Scale     float64
		Transform uint32
		Primary   bool
		Monitors  []monitorMode
	}
	config := []logicalMonitor{{Scale: 1, Transform: 1, Primary: true,
		Monitors: []monitorMode{{Connector: m.ID.Connector, Mode: m.Modes[0].ID, Props: map[string]dbus.Variant{}}}}}
	const temporary = 1
	if err := s.call(o, name+".ApplyMonitorsConfig", serial, uint32(temporary), config, map[string]dbus.Variant{}).Err; err != nil {
		s.t.Fatalf("DisplayConfig.ApplyMonitorsConfig: %v", err)
	}
	s.W, s.H = s.H, s.W
	// The change ends every screen-cast and remote-desktop session, the
	// test's own among them.
	s.mu.Lock()
	s.pointer = nil
	s.mu.Unlock()
}

// GNOME Shell's "Allow Applications to Take Screenshots?" dialog, centred:
// a blank spot inside it and its Allow button.
var (
	shotDialogBlank = [2]int{-260, 40}
	shotAllow       = [2]int{156, 94}
)

// AllowScreenshots answers GNOME Shell's screenshot permission dialog
// (the Screenshot portal asks through the Access portal) with Allow, once
// it is fully shown.
func (s *Session) AllowScreenshots() {
	s.t.Helper()
	x, y := s.at(shotDialogBlank)
	shown := func() bool {
		c := s.Capture().RGBAAt(x, y)
		return c.R > 240 && c.G > 240 && c.B > 238
	}
	waitFor(s.t, 2*time.Minute, "the screenshot permission dialog", shown)
	s.Click(s.at(shotAllow))
	waitFor(s.t, 2*time.Minute, "the screenshot permission dialog to close", func() bool { return !shown() })
}

// Key presses and releases the key with this keysym, through mutter's
// private remote desktop.
func (s *Session) Key(keysym uint32) {
	s.t.Helper()
	r := s.input()
	o := s.conn.Object(mutterRD, r.rd)
	for _, down := range []bool{true, false} {
		if err := s.call(o, mutterRD+".Session.NotifyKeyboardKeysym", keysym, down).Err; err != nil {
			s.t.Fatalf("NotifyKeyboardKeysym: %v", err)
		}
	}
}

// leaveOverview closes the overview gnome-shell starts in, with Escape,
// and waits for the desktop's background where the overview's dark grey
// was.
func (s *Session) leaveOverview() {
	s.t.Helper()
	overview := func() bool {
		c := s.Capture().RGBAAt(20, s.H-20)
		return c.R == c.G && c.G == c.B
	}
	waitFor(s.t, 2*time.Minute, "gnome-shell's overview", overview)
	s.Key(0xff1b)
	waitFor(s.t, 2*time.Minute, "gnome-shell to leave the overview", func() bool { return !overview() })
}

// DestroyStreams destroys, with pw-cli, every screen-cast stream's
// PipeWire node but the test's own (Click's): a stream lost without the
// portal closing its session, as when PipeWire or a compositor plug-in
// drops it. It returns the nodes destroyed, and fails the test if none.
func (s *Session) DestroyStreams() []uint32 {
	s.t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	dump := exec.CommandContext(ctx, "pw-dump", "--no-colors")
	dump.Env = s.env
	out, err := dump.Output()
	if err != nil {
		s.t.Fatalf("pw-dump: %v", err)
	}
	var objs []struct {
		ID   uint32 `json:"id"`
		Type string `json:"type"`
		Info struct {
			Props map[string]any `json:"props"`
		} `json:"info"`
	}
	if err := json.Unmarshal(out, &objs); err != nil {
		s.t.Fatalf("pw-dump: %v", err)
	}
	s.mu.Lock()
	own := uint32(0)
	if s.pointer != nil {
		own = s.pointer.node
	}
	s.mu.Unlock()
	var gone []uint32
	for _, o := range objs {
		if o.Type != "PipeWire:Interface:Node" || o.Info.Props["media.name"] != "meta-screen-cast-src" || o.ID == own {
			continue
		}
		cmd := exec.CommandContext(ctx, "pw-cli", "destroy", strconv.FormatUint(uint64(o.ID), 10))
		cmd.Env = s.env
		if b, err := cmd.CombinedOutput(); err != nil {
			s.t.Fatalf("pw-cli destroy %d: %v: %s", o.ID, err, b)
		}
		gone = append(gone, o.ID)
	}
	if len(gone) == 0 {
		s.t.Fatalf("no screen-cast stream to destroy in PipeWire's graph")
	}
	return gone
}
