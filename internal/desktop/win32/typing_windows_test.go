package win32

import (
	"context"
	"runtime"
	"testing"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/hostlink/hostlink/internal/desktop/native"
)

var (
	procPeekMessageW     = user32.NewProc("PeekMessageW")
	procTranslateMessage = user32.NewProc("TranslateMessage")
	procDispatchMessageW = user32.NewProc("DispatchMessageW")
	procSetFocus         = user32.NewProc("SetFocus")
)

type msg struct {
	hwnd    uintptr
	message uint32
	wParam  uintptr
	lParam  uintptr
	time    uint32
	pt      point
	private uint32
}

// pump dispatches this thread's window messages for d.
func pump(d time.Duration) {
	var m msg
	for end := time.Now().Add(d); time.Now().Before(end); {
		for {
			r, _, _ := procPeekMessageW.Call(uintptr(unsafe.Pointer(&m)), 0, 0, 0, 1) // PM_REMOVE
			if r == 0 {
				break
			}
			procTranslateMessage.Call(uintptr(unsafe.Pointer(&m)))
			procDispatchMessageW.Call(uintptr(unsafe.Pointer(&m)))
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// TestTypeIntoEdit types text, including characters outside the keyboard
// layout, into a real EDIT control through SendInput, and reads back what
// the control received.
func TestTypeIntoEdit(t *testing.T) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	b, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	class, _ := windows.UTF16PtrFromString("EDIT")
	title, _ := windows.UTF16PtrFromString("")
	const wsVisible, wsOverlapped = 0x10000000, 0x00CF0000
	h, _, err := procCreateWindowExW.Call(0, uintptr(unsafe.Pointer(class)), uintptr(unsafe.Pointer(title)),
		wsVisible|wsOverlapped, 40, 40, 400, 120, 0, 0, 0, 0)
	if h == 0 {
		t.Fatalf("CreateWindowExW: %v", err)
	}
	defer procDestroyWindow.Call(h)
	pump(300 * time.Millisecond)
	procSetForegroundWindow.Call(h)
	procSetFocus.Call(h)
	pump(200 * time.Millisecond)
	if fg := windows.GetForegroundWindow(); fg != windows.HWND(h) {
		t.Fatalf("the edit window is not in the foreground (%#x vs %#x)", fg, h)
	}
	box, _ := windowRect(windows.HWND(h))
	before, err := b.Capture(context.Background(), box, 1)
	if err != nil {
		t.Fatal(err)
	}
	const text = "Hello, wörld € 😀"
	if n, err := b.Dispatch(context.Background(), []native.Step{{Kind: native.Text, Text: text}}); err != nil || n != 1 {
		t.Fatalf("dispatch %d %v", n, err)
	}
	var got string
	for i := 0; i < 20 && got != text; i++ {
		pump(100 * time.Millisecond)
		got = windowTitle(windows.HWND(h))
	}
	if got != text {
		t.Fatalf("the edit control holds %q, want %q", got, text)
	}
	// The capture shows it: the text's pixels differ from the empty control.
	pump(200 * time.Millisecond)
	after, err := b.Capture(context.Background(), box, 1)
	if err != nil {
		t.Fatal(err)
	}
	changed := 0
	for i := 0; i < len(after.Pix); i += 4 {
		if after.Pix[i] != before.Pix[i] || after.Pix[i+1] != before.Pix[i+1] || after.Pix[i+2] != before.Pix[i+2] {
			changed++
		}
	}
	if changed < 50 {
		t.Fatalf("only %d pixels of the edit window changed after typing", changed)
	}
	t.Logf("%d pixels changed in the %dx%d window", changed, box.W, box.H)
}
