package win32

import (
	"context"
	"errors"
	"runtime"
	"strings"
	"testing"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/hostlink/hostlink/internal/desktop/native"
)

// setForeign puts text on the clipboard as another application would, with
// the concealed marker format too when marked.
func setForeign(t *testing.T, text string, marked bool) {
	t.Helper()
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := openClipboard(context.Background()); err != nil {
		t.Fatal(err)
	}
	defer procCloseClipboard.Call()
	procEmptyClipboard.Call()
	u, _ := windows.UTF16FromString(text)
	h, _, _ := procGlobalAlloc.Call(gmemMoveable, uintptr(len(u)*2))
	p, _, _ := procGlobalLock.Call(h)
	copy(unsafe.Slice((*uint16)(pointer(p)), len(u)), u)
	procGlobalUnlock.Call(h)
	if r, _, err := procSetClipboardData.Call(cfUnicodeText, h); r == 0 {
		t.Fatal(err)
	}
	if marked {
		n, _ := windows.UTF16PtrFromString(concealedFormats[0])
		f, _, _ := procRegisterClipboardFormatW.Call(uintptr(unsafe.Pointer(n)))
		m, _, _ := procGlobalAlloc.Call(gmemMoveable, 4)
		if r, _, err := procSetClipboardData.Call(f, m); r == 0 {
			t.Fatal(err)
		}
	}
}

func TestClipboard(t *testing.T) {
	b, err := Open()
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	text := "hostlink wrote ✓ 😀\r\nline two"
	if err := b.WriteClipboard(ctx, text); err != nil {
		t.Fatal(err)
	}
	got, err := b.ReadClipboard(ctx, 1000)
	if err != nil || got.Text != text || !got.Ours {
		t.Fatalf("read back: %+v %v", got, err)
	}
	if _, err := b.ReadClipboard(ctx, 10); !errors.Is(err, native.ErrTooLarge) {
		t.Errorf("read over the limit: %v", err)
	}
	big := strings.Repeat("€", 200)
	if err := b.WriteClipboard(ctx, big); err != nil {
		t.Fatal(err)
	}
	if _, err := b.ReadClipboard(ctx, 300); !errors.Is(err, native.ErrTooLarge) {
		t.Errorf("600 bytes of UTF-8 read with a 300-byte limit: %v", err)
	}

	setForeign(t, "from another application", false)
	if got, err := b.ReadClipboard(ctx, 1000); err != nil || got.Text != "from another application" || got.Ours {
		t.Errorf("foreign read: %+v %v", got, err)
	}
	setForeign(t, "hunter2", true)
	if got, err := b.ReadClipboard(ctx, 1000); err != nil || got.Concealed != concealedFormats[0] || got.Text != "" {
		t.Errorf("password manager's content: %+v %v", got, err)
	}
}
