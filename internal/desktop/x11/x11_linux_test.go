package x11

import (
	"context"
	"errors"
	"fmt"
	"image"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/jezek/xgb/xproto"

	"github.com/hostlink/hostlink/internal/desktop/native"
	"github.com/hostlink/hostlink/internal/desktop/xvfbtest"
)

func open(t *testing.T, d *xvfbtest.Display) *Backend {
	t.Helper()
	b, err := Open(d.Name)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { b.Close() })
	return b
}

// shellXterm starts a display with a focused xterm whose shell runs in a
// fresh directory, and opens the backend on that display.
func shellXterm(t *testing.T, title string) (d *xvfbtest.Display, b *Backend, dir string) {
	t.Helper()
	d = xvfbtest.Start(t, 800, 600)
	dir = t.TempDir()
	id := d.Xterm(title, 20, 20, dir)
	d.Run("xdotool", "windowactivate", "--sync", id)
	return d, open(t, d), dir
}

// keymapOf reads b's keyboard map, failing the test when it cannot.
func keymapOf(t *testing.T, b *Backend) *keymap {
	t.Helper()
	km, err := b.loadKeymap()
	if err != nil {
		t.Fatal(err)
	}
	return km
}

// waitFile waits for the xterm's shell to write want to name in dir.
func waitFile(d *xvfbtest.Display, dir, name, want string) {
	d.Eventually(name, func() bool {
		got, err := os.ReadFile(filepath.Join(dir, name))
		return err == nil && string(got) == want
	})
}

// diff counts the pixels where a and b differ, comparing a's bounds with
// b's from b's origin.
func diff(a, b *image.RGBA) int {
	n := 0
	for y := 0; y < a.Rect.Dy(); y++ {
		for x := 0; x < a.Rect.Dx(); x++ {
			p, q := a.RGBAAt(a.Rect.Min.X+x, a.Rect.Min.Y+y), b.RGBAAt(b.Rect.Min.X+x, b.Rect.Min.Y+y)
			if p.R != q.R || p.G != q.G || p.B != q.B {
				n++
			}
		}
	}
	return n
}

func TestCaptureMatchesXWD(t *testing.T) {
	d := xvfbtest.Start(t, 800, 600)
	d.Xterm("capture-me", 40, 30, t.TempDir())
	b := open(t, d)
	ctx := context.Background()
	got, err := b.Capture(ctx, native.Rect{W: 800, H: 600}, 1)
	if err != nil {
		t.Fatal(err)
	}
	want := d.XWD()
	if got.Rect != want.Rect {
		t.Fatalf("capture %v, xwd %v", got.Rect, want.Rect)
	}
	if n := diff(got, want); n != 0 {
		t.Fatalf("%d of %d pixels differ from xwd's capture", n, 800*600)
	}
	// The screen is not uniform: the xterm is on it.
	colors := map[[3]byte]bool{}
	for i := 0; i < len(got.Pix); i += 4 {
		colors[[3]byte{got.Pix[i], got.Pix[i+1], got.Pix[i+2]}] = true
	}
	if len(colors) < 2 {
		t.Fatalf("capture has %d colours", len(colors))
	}
	// A rectangle partly off screen: the inside matches, the rest is black.
	part, err := b.Capture(ctx, native.Rect{X: 700, Y: 500, W: 200, H: 200}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if part.RGBAAt(50, 50) != want.RGBAAt(750, 550) || part.RGBAAt(150, 150).R != 0 {
		t.Fatalf("partial capture wrong: %v vs %v, outside %v", part.RGBAAt(50, 50), want.RGBAAt(750, 550), part.RGBAAt(150, 150))
	}
}

func TestWindowsAndFocus(t *testing.T) {
	d := xvfbtest.Start(t, 800, 600)
	dir := t.TempDir()
	a := d.Xterm("term-a", 10, 10, dir)
	d.Xterm("term-b", 300, 200, dir)
	b := open(t, d)
	ctx := context.Background()
	if st := b.Status(ctx); !st.Windows.Ready || !st.Input.Ready || !st.Capture.Ready {
		t.Fatalf("status %+v", st)
	}
	if st := b.Status(ctx); st.Accessibility.Ready || st.Accessibility.Reason != "no_session_bus" {
		t.Fatalf("accessibility without a session bus: %+v", st.Accessibility)
	}
	ws, err := b.Windows(ctx)
	if err != nil {
		t.Fatal(err)
	}
	byTitle := map[string]native.Window{}
	for _, w := range ws {
		byTitle[w.Title] = w
	}
	wa, ok := byTitle["term-a"]
	if !ok || wa.App != "XTerm" || wa.PID == 0 || strconv.FormatUint(wa.Handle, 10) != a {
		t.Fatalf("term-a not listed as expected: %+v (all %+v)", wa, ws)
	}
	geo := d.Run("xdotool", "getwindowgeometry", a)
	if !strings.Contains(geo, fmt.Sprintf("Geometry: %dx%d", wa.Bounds.W, wa.Bounds.H)) {
		t.Fatalf("bounds %+v, xdotool says %s", wa.Bounds, geo)
	}
	if err := b.Focus(ctx, wa); err != nil {
		t.Fatal(err)
	}
	d.Eventually("term-a focused", func() bool {
		out, _ := d.Output("xdotool", "getactivewindow")
		return strings.TrimSpace(out) == a
	})
	st, err := b.State(ctx)
	if err != nil || st.Focus != wa.Handle || st.FocusBox != wa.Bounds {
		t.Fatalf("state %+v %v", st, err)
	}
	if err := b.Focus(ctx, native.Window{Handle: 0x7ffffff}); !errors.Is(err, native.ErrWindowGone) {
		t.Fatalf("focus of a missing window: %v", err)
	}
}

// TestFocusIsWhereKeysGo: the focused window is the one holding the X
// input focus even while the window manager has not yet published it in
// _NET_ACTIVE_WINDOW (it lags the focus on every activation; here the
// window manager is frozen to make the lag last).
func TestFocusIsWhereKeysGo(t *testing.T) {
	d := xvfbtest.Start(t, 800, 600)
	dir := t.TempDir()
	a := d.Xterm("keys-a", 10, 10, dir)
	c := d.Xterm("keys-b", 300, 200, dir)
	d.Run("xdotool", "windowactivate", "--sync", a)
	b := open(t, d)
	ctx := context.Background()
	if err := d.WM.Process.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.WM.Process.Signal(syscall.SIGCONT) })
	d.Run("xdotool", "windowfocus", "--sync", c)
	if out := strings.TrimSpace(d.Run("xdotool", "getactivewindow")); out != a {
		t.Fatalf("the frozen window manager published %s, want still %s", out, a)
	}
	st, err := b.State(ctx)
	if err != nil || strconv.FormatUint(st.Focus, 10) != c {
		t.Fatalf("state focus %d (%v), want keys-b %s", st.Focus, err, c)
	}
	ws, err := b.Windows(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, w := range ws {
		if w.Focused != (strconv.FormatUint(w.Handle, 10) == c) {
			t.Fatalf("window %q focused=%v", w.Title, w.Focused)
		}
	}
	// The focus on no client (here: the root) is no focused window.
	xproto.SetInputFocus(b.conn, xproto.InputFocusPointerRoot, b.root, xproto.TimeCurrentTime)
	if st, err := b.State(ctx); err != nil || st.Focus != 0 {
		t.Fatalf("focus on the root: %d %v", st.Focus, err)
	}
}

func TestClickLandsWhereAsked(t *testing.T) {
	d := xvfbtest.Start(t, 800, 600)
	b := open(t, d)
	ctx := context.Background()
	for _, p := range [][2]int{{0, 0}, {123, 456}, {799, 599}} {
		n, err := b.Dispatch(ctx, []native.Step{
			{Kind: native.Move, X: p[0], Y: p[1]},
			{Kind: native.ButtonDown, Button: native.Left},
			{Kind: native.ButtonUp, Button: native.Left},
		})
		if err != nil || n != 3 {
			t.Fatalf("dispatch: %d %v", n, err)
		}
		out := d.Run("xdotool", "getmouselocation")
		if want := fmt.Sprintf("x:%d y:%d ", p[0], p[1]); !strings.HasPrefix(out, want) {
			t.Fatalf("pointer at %q, want %q", out, want)
		}
		x, y, err := b.Cursor(ctx)
		if err != nil || x != p[0] || y != p[1] {
			t.Fatalf("Cursor = %d,%d %v", x, y, err)
		}
	}
}

// TestTypeIntoXterm types shell commands into a real xterm, including
// characters the keyboard map lacks, and checks what the shell received
// through the file the command writes.
func TestTypeIntoXterm(t *testing.T) {
	d, b, dir := shellXterm(t, "typing")
	ctx := context.Background()
	before := keymapOf(t, b)
	text := "printf '%s' 'Hello, World! ~|{}' > out.txt\n"
	if n, err := b.Dispatch(ctx, []native.Step{{Kind: native.Text, Text: text}}); err != nil || n != 1 {
		t.Fatalf("dispatch: %d %v", n, err)
	}
	waitFile(d, dir, "out.txt", "Hello, World! ~|{}")
	// A key chord: ctrl+u clears the line typed so far.
	steps := []native.Step{{Kind: native.Text, Text: "echo wrong > chord.txt"},
		{Kind: native.KeyDown, Key: "ctrl"}, {Kind: native.KeyDown, Key: "u"},
		{Kind: native.KeyUp, Key: "u"}, {Kind: native.KeyUp, Key: "ctrl"},
		{Kind: native.Text, Text: "echo right > chord.txt"},
		{Kind: native.KeyDown, Key: "enter"}, {Kind: native.KeyUp, Key: "enter"}}
	if n, err := b.Dispatch(ctx, steps); err != nil || n != len(steps) {
		t.Fatalf("dispatch: %d %v", n, err)
	}
	waitFile(d, dir, "chord.txt", "right\n")
	if after := keymapOf(t, b); len(after.spares) != len(before.spares) {
		t.Fatalf("keymap not restored: %d spares before, %d after", len(before.spares), len(after.spares))
	}
}

// TestTypeUnmappedCharacters types characters that are not on the US
// keyboard map, through keycodes bound to them, into a UTF-8 xterm. The
// bindings outlive the request (an xterm behind on its events translates
// them with the map it fetches then) and are undone when the backend
// closes.
func TestTypeUnmappedCharacters(t *testing.T) {
	d, b, dir := shellXterm(t, "unicode")
	ctx := context.Background()
	km := keymapOf(t, b)
	for _, r := range "é€ß" {
		if _, ok := km.lookup(runeKeysym(r)); ok {
			t.Fatalf("%q is on the keymap; the test needs unmapped characters", r)
		}
	}
	if _, err := b.Dispatch(ctx, []native.Step{{Kind: native.Text, Text: "printf '%s' 'é€ß' > u.txt\n"}}); err != nil {
		t.Fatal(err)
	}
	waitFile(d, dir, "u.txt", "é€ß")
	during := keymapOf(t, b)
	if len(during.spares) != len(km.spares)-3 {
		t.Fatalf("%d free keycodes after binding 3 characters, %d before", len(during.spares), len(km.spares))
	}
	// The same characters again bind nothing more.
	if _, err := b.Dispatch(ctx, []native.Step{{Kind: native.Text, Text: "printf '%s' 'ß€é' > v.txt\n"}}); err != nil {
		t.Fatal(err)
	}
	waitFile(d, dir, "v.txt", "ß€é")
	if again := keymapOf(t, b); len(again.spares) != len(during.spares) {
		t.Fatal("typing bound characters again bound more keycodes")
	}
	b.Close()
	if after := keymapOf(t, open(t, d)); len(after.spares) != len(km.spares) {
		t.Fatalf("keymap not restored at close: %d free keycodes before, %d after", len(km.spares), len(after.spares))
	}
}

// TestBindingsReclaimedLeastRecentlyUsed: with the free keycodes used up
// (another client holds all but two), a request takes back the binding
// used longest ago, never one it types itself, and a request needing more
// keycodes than exist sends nothing.
func TestBindingsReclaimedLeastRecentlyUsed(t *testing.T) {
	d, b, dir := shellXterm(t, "reclaim")
	ctx := context.Background()
	km := keymapOf(t, b)
	// "Another client" binds a Unicode keysym to every free keycode but two.
	other := open(t, d)
	other.input.Lock()
	for _, code := range km.spares[2:] {
		if err := other.bind(km, code, xproto.Keysym(0x1000100+int(code))); err != nil {
			t.Fatal(err)
		}
	}
	other.input.Unlock()
	type_ := func(text, file, want string) {
		t.Helper()
		if _, err := b.Dispatch(ctx, []native.Step{{Kind: native.Text, Text: "printf '%s' '" + text + "' > " + file + "\n"}}); err != nil {
			t.Fatal(err)
		}
		waitFile(d, dir, file, want)
	}
	type_("é€", "a.txt", "é€")
	type_("€", "b.txt", "€") // é is now the least recently used
	type_("ß", "c.txt", "ß")
	now := keymapOf(t, b)
	if _, ok := now.lookup(runeKeysym('é')); ok {
		t.Error("é is still bound: the most recently used binding was taken back")
	}
	for _, r := range "€ß" {
		if _, ok := now.lookup(runeKeysym(r)); !ok {
			t.Errorf("%q is not bound", r)
		}
	}
	// Three unmapped characters and two keycodes: refused, nothing sent.
	n, err := b.Dispatch(ctx, []native.Step{{Kind: native.Text, Text: "printf 'éøå' > d.txt\n"}})
	if !errors.Is(err, native.ErrUnmappedKey) || n != 0 {
		t.Fatalf("got %d %v", n, err)
	}
}

func TestUnmappedKeyDispatchesNothing(t *testing.T) {
	d := xvfbtest.Start(t, 640, 480)
	b := open(t, d)
	ctx := context.Background()
	steps := []native.Step{{Kind: native.Move, X: 5, Y: 5}, {Kind: native.KeyDown, Key: "hyperdrive"}}
	n, err := b.Dispatch(ctx, steps)
	if !errors.Is(err, native.ErrUnmappedKey) || n != 0 {
		t.Fatalf("got %d %v", n, err)
	}
	if out := d.Run("xdotool", "getmouselocation"); strings.HasPrefix(out, "x:5 y:5 ") {
		t.Fatal("the move before the unmapped key was dispatched")
	}
	if _, err := b.Dispatch(ctx, []native.Step{{Kind: native.Wheel, DY: 60}}); !errors.Is(err, native.ErrNotSupported) {
		t.Fatalf("half a notch: %v", err)
	}
}

// TestRandRMonitors adds two RandR monitors over one wide screen with
// xrandr --setmonitor and checks they are listed and captured.
func TestRandRMonitors(t *testing.T) {
	d := xvfbtest.Start(t, 1600, 600)
	xvfbtest.Need(t, "xrandr")
	b := open(t, d)
	ctx := context.Background()
	d.Run("xrandr", "--setmonitor", "LEFT", "800/200x600/150+0+0", "none")
	d.Run("xrandr", "--setmonitor", "RIGHT", "800/200x600/150+800+0", "none")
	mons, err := b.Monitors(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("monitors: %+v", mons)
	var right *native.Monitor
	for i := range mons {
		if mons[i].Name == "RIGHT" {
			right = &mons[i]
		}
	}
	if len(mons) != 2 || right == nil || right.Bounds != (native.Rect{X: 800, W: 800, H: 600}) {
		t.Fatalf("RIGHT not listed: %+v", mons)
	}
	img, err := b.Capture(ctx, right.Bounds, right.Scale)
	if err != nil {
		t.Fatal(err)
	}
	full := d.XWD()
	if n := diff(img, full.SubImage(image.Rect(800, 0, 1600, 600)).(*image.RGBA)); n != 0 {
		t.Fatalf("%d pixels of the right monitor differ", n)
	}
}

// TestAccessibilityATSPI reads a real GTK application's accessibility tree
// through the AT-SPI registry on a private session bus; without a session
// bus it is reported unavailable.
func TestAccessibilityATSPI(t *testing.T) {
	d := xvfbtest.Start(t, 640, 480)
	b := open(t, d)
	ctx := context.Background()
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	if r := b.Status(ctx).Accessibility; r.Ready || r.Reason != "no_session_bus" {
		t.Fatalf("without a bus: %+v", r)
	}
	if _, err := b.Accessibility(ctx, 1000); !errors.Is(err, native.ErrNotSupported) {
		t.Fatalf("without a bus: %v", err)
	}
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", d.SessionBus())
	d.GtkApp("a11y-window", "hostlink-button")
	var text string
	d.Eventually("the button in the accessibility tree", func() bool {
		text, _ = b.Accessibility(ctx, 64<<10)
		return strings.Contains(text, "push button: hostlink-button")
	})
	if !strings.Contains(text, "frame: a11y-window") {
		t.Fatalf("tree:\n%s", text)
	}
	if r := b.Status(ctx).Accessibility; !r.Ready {
		t.Fatalf("status %+v", r)
	}
	short, err := b.Accessibility(ctx, 10)
	if err != nil || len(short) > 10 {
		t.Fatalf("bounded walk: %q %v", short, err)
	}
}

// TestTypeWithCapsLock: typed text stays literal with Caps Lock on.
func TestTypeWithCapsLock(t *testing.T) {
	d, b, dir := shellXterm(t, "caps")
	d.Run("xdotool", "key", "Caps_Lock")
	t.Cleanup(func() { d.Output("xdotool", "key", "Caps_Lock") })
	if _, err := b.Dispatch(context.Background(), []native.Step{{Kind: native.Text, Text: "echo MixedCase > caps.txt\n"}}); err != nil {
		t.Fatal(err)
	}
	waitFile(d, dir, "caps.txt", "MixedCase\n")
}
