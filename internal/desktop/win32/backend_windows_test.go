package win32

import (
	"context"
	"errors"
	"os"
	"runtime"
	"sync"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/hostlink/hostlink/internal/desktop/native"
)

func TestInputLayout(t *testing.T) {
	if s := unsafe.Sizeof(input{}); s != 40 {
		t.Fatalf("INPUT is %d bytes, want 40", s)
	}
	if s := unsafe.Sizeof(keybdInput{}); s != unsafe.Sizeof(mouseInput{}) {
		t.Fatalf("KEYBDINPUT %d bytes, MOUSEINPUT %d", s, unsafe.Sizeof(mouseInput{}))
	}
	in := key(0x41, 7, keyeventfKeyUp)
	k := (*keybdInput)(unsafe.Pointer(&in.u))
	if in.typ != inputKeyboard || k.vk != 0x41 || k.scan != 7 || k.flags != keyeventfKeyUp {
		t.Fatalf("key() = %+v %+v", in, k)
	}
}

func TestEvents(t *testing.T) {
	tests := []struct {
		step native.Step
		n    int
		err  error
	}{
		{native.Step{Kind: native.Text, Text: "a€\n"}, 2 + 2 + 2, nil},
		{native.Step{Kind: native.Text, Text: "😀"}, 4, nil}, // a surrogate pair
		{native.Step{Kind: native.Text, Text: "\x01"}, 0, native.ErrUnmappedKey},
		{native.Step{Kind: native.KeyDown, Key: "enter"}, 1, nil},
		{native.Step{Kind: native.KeyDown, Key: "hyperdrive"}, 0, native.ErrUnmappedKey},
		{native.Step{Kind: native.Wheel, DX: 120, DY: -60}, 2, nil},
		{native.Step{Kind: native.ButtonDown, Button: native.Right}, 1, nil},
	}
	for _, tt := range tests {
		ev, err := events(tt.step)
		if !errors.Is(err, tt.err) || len(ev) != tt.n {
			t.Errorf("events(%+v) = %d events, %v; want %d, %v", tt.step, len(ev), err, tt.n, tt.err)
		}
	}
	for _, k := range native.Keys {
		if _, ok := keyStroke(k); !ok {
			t.Errorf("named key %q has no virtual key", k)
		}
	}
	ev, _ := events(native.Step{Kind: native.Wheel, DY: 240})
	if int32(ev[0].u.mouseData) != -240 || ev[0].u.flags != mouseeventfWheel {
		t.Errorf("scroll down 2 notches: %+v", ev[0].u)
	}
}

// TestDesktop runs the backend against the desktop it has: a real one on
// Windows, Wine's otherwise.
func TestDesktop(t *testing.T) {
	b, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ctx := context.Background()
	t.Logf("status %+v", b.Status(ctx))
	mons, err := b.Monitors(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("monitors %+v", mons)
	if mons[0].Bounds.Empty() {
		t.Fatalf("monitor without area: %+v", mons)
	}
	img, err := b.Capture(ctx, native.Rect{X: mons[0].Bounds.X, Y: mons[0].Bounds.Y, W: 64, H: 48}, 1)
	if err != nil {
		t.Fatal(err)
	}
	if img.Rect.Dx() != 64 || img.Rect.Dy() != 48 || img.Pix[3] != 0xff {
		t.Fatalf("capture %v alpha %d", img.Rect, img.Pix[3])
	}
	st, err := b.State(ctx)
	if err != nil || st.Session == "" {
		t.Fatalf("state %+v %v", st, err)
	}
	t.Logf("state %+v", st)
	n, err := b.Dispatch(ctx, []native.Step{{Kind: native.Move, X: mons[0].Bounds.X + 10, Y: mons[0].Bounds.Y + 20}})
	t.Logf("move: %d %v", n, err)
	if err == nil {
		x, y, err := b.Cursor(ctx)
		if err != nil || x != mons[0].Bounds.X+10 || y != mons[0].Bounds.Y+20 {
			t.Fatalf("cursor at %d,%d (%v) after moving to +10,+20", x, y, err)
		}
	}
	if _, err := b.Dispatch(ctx, []native.Step{{Kind: native.Move, X: 1, Y: 1}, {Kind: native.KeyDown, Key: "nope"}}); !errors.Is(err, native.ErrUnmappedKey) {
		t.Fatalf("unmapped key: %v", err)
	}
}

// TestWindowList creates a window and finds it in the list, owned by this
// process, then focuses it.
func TestWindowList(t *testing.T) {
	b, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	h, destroy := createWindow(t, "hostlink-win32-test")
	ctx := context.Background()
	ws, err := b.Windows(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var w *native.Window
	for i := range ws {
		if ws[i].Handle == uint64(h) {
			w = &ws[i]
		}
	}
	if w == nil || w.Title != "hostlink-win32-test" || w.PID != os.Getpid() || w.Elevated || w.Created == 0 {
		t.Fatalf("window not listed as expected: %+v in %+v", w, ws)
	}
	if err := b.Focus(ctx, *w); err != nil {
		t.Logf("focus: %v", err)
	}
	destroy()
	if err := b.Focus(ctx, *w); !errors.Is(err, native.ErrWindowGone) {
		t.Fatalf("focus of a destroyed window: %v", err)
	}
}

var (
	procCreateWindowExW = user32.NewProc("CreateWindowExW")
	procDestroyWindow   = user32.NewProc("DestroyWindow")
)

// createWindow creates a window on its own locked OS thread, which pumps
// its messages until destroy is called. Without a pump, anything that
// sends the window a message from another thread (GetWindowText does)
// waits forever; DestroyWindow must run on the owning thread.
func createWindow(t *testing.T, title string) (h windows.HWND, destroy func()) {
	t.Helper()
	created := make(chan windows.HWND)
	quit, done := make(chan struct{}), make(chan struct{})
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		defer close(done)
		class, _ := windows.UTF16PtrFromString("STATIC")
		name, _ := windows.UTF16PtrFromString(title)
		const wsVisible, wsOverlapped = 0x10000000, 0x00CF0000
		h, _, _ := procCreateWindowExW.Call(0, uintptr(unsafe.Pointer(class)), uintptr(unsafe.Pointer(name)),
			wsVisible|wsOverlapped, 50, 60, 300, 200, 0, 0, 0, 0)
		created <- windows.HWND(h)
		if h == 0 {
			return
		}
		for {
			select {
			case <-quit:
				procDestroyWindow.Call(h)
				pump(50 * time.Millisecond)
				return
			default:
				pump(20 * time.Millisecond)
			}
		}
	}()
	h = <-created
	if h == 0 {
		t.Fatal("CreateWindowExW failed")
	}
	var once sync.Once
	destroy = func() { once.Do(func() { close(quit); <-done }) }
	t.Cleanup(destroy)
	return h, destroy
}
