package win32

import (
	"context"
	"errors"
	"runtime"
	"sync/atomic"
	"time"
	"unicode/utf16"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/hostlink/hostlink/internal/desktop/native"
)

var (
	procOpenClipboard              = user32.NewProc("OpenClipboard")
	procCloseClipboard             = user32.NewProc("CloseClipboard")
	procEmptyClipboard             = user32.NewProc("EmptyClipboard")
	procGetClipboardData           = user32.NewProc("GetClipboardData")
	procSetClipboardData           = user32.NewProc("SetClipboardData")
	procIsClipboardFormatAvailable = user32.NewProc("IsClipboardFormatAvailable")
	procRegisterClipboardFormatW   = user32.NewProc("RegisterClipboardFormatW")
	procGetClipboardSequenceNumber = user32.NewProc("GetClipboardSequenceNumber")

	kernel32         = windows.NewLazySystemDLL("kernel32.dll")
	procGlobalAlloc  = kernel32.NewProc("GlobalAlloc")
	procGlobalFree   = kernel32.NewProc("GlobalFree")
	procGlobalLock   = kernel32.NewProc("GlobalLock")
	procGlobalUnlock = kernel32.NewProc("GlobalUnlock")
	procGlobalSize   = kernel32.NewProc("GlobalSize")
)

const (
	cfUnicodeText = 13
	gmemMoveable  = 0x0002
)

// concealedFormats are the registered formats by which password managers
// mark clipboard content that clipboard tools must not read or keep.
var concealedFormats = []string{"ExcludeClipboardContentFromMonitorProcessing", "Clipboard Viewer Ignore"}

// wroteSeq is the clipboard sequence number right after hostlink's last
// write: while it is current, the clipboard still holds what hostlink
// wrote. The clipboard is one per session, like this variable.
var wroteSeq atomic.Uint32

func sequence() uint32 {
	r, _, _ := procGetClipboardSequenceNumber.Call()
	return uint32(r)
}

// openClipboard opens the clipboard on the calling OS thread, retrying
// briefly while another application holds it. The caller has locked the
// thread and closes the clipboard.
func openClipboard(ctx context.Context) error {
	for range 20 {
		if r, _, _ := procOpenClipboard.Call(0); r != 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(10 * time.Millisecond):
		}
	}
	return errors.New("another application holds the clipboard open")
}

// WriteClipboard replaces the clipboard's content with text.
func (b *Backend) WriteClipboard(ctx context.Context, text string) error {
	if err := setText(ctx, text); err != nil {
		return err
	}
	// Read after closing: Wine counts the change only then.
	wroteSeq.Store(sequence())
	return nil
}

func setText(ctx context.Context, text string) error {
	u := utf16.Encode([]rune(text))
	u = append(u, 0)
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := openClipboard(ctx); err != nil {
		return err
	}
	defer procCloseClipboard.Call()
	if r, _, err := procEmptyClipboard.Call(); r == 0 {
		return err
	}
	h, _, err := procGlobalAlloc.Call(gmemMoveable, uintptr(len(u)*2))
	if h == 0 {
		return err
	}
	p, _, err := procGlobalLock.Call(h)
	if p == 0 {
		procGlobalFree.Call(h)
		return err
	}
	copy(unsafe.Slice((*uint16)(pointer(p)), len(u)), u)
	procGlobalUnlock.Call(h)
	if r, _, err := procSetClipboardData.Call(cfUnicodeText, h); r == 0 {
		procGlobalFree.Call(h) // the clipboard did not take it
		return err
	}
	return nil
}

// ReadClipboard returns the clipboard's Unicode text.
func (b *Backend) ReadClipboard(ctx context.Context, max int) (native.ClipboardText, error) {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	if err := openClipboard(ctx); err != nil {
		return native.ClipboardText{}, err
	}
	defer procCloseClipboard.Call()
	for _, name := range concealedFormats {
		n, _ := windows.UTF16PtrFromString(name)
		f, _, _ := procRegisterClipboardFormatW.Call(uintptr(unsafe.Pointer(n)))
		if r, _, _ := procIsClipboardFormatAvailable.Call(f); f != 0 && r != 0 {
			return native.ClipboardText{Concealed: name}, nil
		}
	}
	ours := wroteSeq.Load() != 0 && wroteSeq.Load() == sequence()
	if r, _, _ := procIsClipboardFormatAvailable.Call(cfUnicodeText); r == 0 {
		return native.ClipboardText{Ours: ours}, nil
	}
	h, _, err := procGetClipboardData.Call(cfUnicodeText)
	if h == 0 {
		return native.ClipboardText{}, err
	}
	p, _, err := procGlobalLock.Call(h)
	if p == 0 {
		return native.ClipboardText{}, err
	}
	defer procGlobalUnlock.Call(h)
	size, _, _ := procGlobalSize.Call(h)
	units := unsafe.Slice((*uint16)(pointer(p)), size/2)
	n := 0
	for n < len(units) && units[n] != 0 {
		n++
	}
	// Every UTF-16 unit takes at least one byte of UTF-8.
	if n > max {
		return native.ClipboardText{}, native.ErrTooLarge
	}
	text := string(utf16.Decode(units[:n]))
	if len(text) > max {
		return native.ClipboardText{}, native.ErrTooLarge
	}
	return native.ClipboardText{Text: text, Ours: ours}, nil
}

// pointer turns the address GlobalLock returned into a pointer: the memory
// is the clipboard's, outside Go's heap, and stays locked while used.
func pointer(p uintptr) unsafe.Pointer { return *(*unsafe.Pointer)(unsafe.Pointer(&p)) }

var _ native.Clipboard = (*Backend)(nil)
