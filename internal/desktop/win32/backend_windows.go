package win32

import (
	"context"
	"fmt"
	"image"
	"path/filepath"
	"strings"
	"sync"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/hostlink/hostlink/internal/desktop/native"
)

var dpiOnce sync.Once

// setDPIAware makes the process per-monitor DPI aware (V2), else system
// aware on older Windows, so that coordinates are physical pixels.
func setDPIAware() {
	dpiOnce.Do(func() {
		if procSetProcessDpiAwarenessContext.Find() == nil {
			if r, _, _ := procSetProcessDpiAwarenessContext.Call(dpiPerMonitorV2); r != 0 {
				return
			}
		}
		if procSetProcessDPIAware.Find() == nil {
			procSetProcessDPIAware.Call()
		}
	})
}

// Backend is the interactive desktop of this Windows session.
type Backend struct {
	elevated bool // this process runs elevated
}

// Open prepares the backend. It fails when no interactive desktop is
// reachable (a service in session 0).
func Open() (*Backend, error) {
	setDPIAware()
	var sid uint32
	if err := windows.ProcessIdToSessionId(windows.GetCurrentProcessId(), &sid); err == nil && sid == 0 {
		return nil, fmt.Errorf("%w: session 0 has no interactive desktop", native.ErrUnavailable)
	}
	return &Backend{elevated: windows.GetCurrentProcessToken().IsElevated()}, nil
}

// ID names the session's interactive desktop.
func (b *Backend) ID() string { return "win32:console" }

// Space: per-monitor DPI aware, so physical pixels.
func (b *Backend) Space() string { return "pixels" }

// Close releases nothing: every handle is per call.
func (b *Backend) Close() error { return nil }

// inputDesktop returns the name of the desktop receiving input ("Default"
// normally, "Winlogon" for the lock screen and UAC prompts), or "" when it
// cannot be opened, which is itself the secure desktop's sign.
func inputDesktop() string {
	h, _, _ := procOpenInputDesktop.Call(0, 0, desktopReadObjs)
	if h == 0 {
		return ""
	}
	defer procCloseDesktop.Call(h)
	var buf [256]uint16
	var n uint32
	r, _, _ := procGetUserObjectInformationW.Call(h, uoiName, uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)*2), uintptr(unsafe.Pointer(&n)))
	if r == 0 {
		return ""
	}
	return windows.UTF16ToString(buf[:])
}

func locked() bool { return !strings.EqualFold(inputDesktop(), "Default") }

// Status: capture and input need the normal input desktop; accessibility
// needs UI Automation and a foreground window this process may read.
func (b *Backend) Status(ctx context.Context) native.Status {
	ok := native.Readiness{Ready: true}
	st := native.Status{Capture: ok, Input: ok, Windows: ok, Accessibility: b.uiaStatus()}
	if locked() {
		l := native.Readiness{Reason: "session_locked", Detail: "the secure desktop (lock screen or UAC prompt) has the input"}
		st.Capture, st.Input = l, l
	}
	return st
}

var (
	monMu   sync.Mutex
	monList []native.Monitor
	monCB   = windows.NewCallback(func(h, hdc, rect, data uintptr) uintptr {
		mi := monitorInfo{size: uint32(unsafe.Sizeof(monitorInfo{}))}
		if r, _, _ := procGetMonitorInfoW.Call(h, uintptr(unsafe.Pointer(&mi))); r == 0 {
			return 1
		}
		m := native.Monitor{
			Index:   len(monList),
			Primary: mi.flags&monitorinfofPrimary != 0,
			Bounds:  rectOf(mi.monitor),
			Scale:   1,
		}
		var dx, dy uint32
		if procGetDpiForMonitor.Find() == nil {
			if r, _, _ := procGetDpiForMonitor.Call(h, mdtEffectiveDPI, uintptr(unsafe.Pointer(&dx)), uintptr(unsafe.Pointer(&dy))); r == 0 && dx > 0 {
				m.DisplayScale = float64(dx) / 96
			}
		}
		monList = append(monList, m)
		return 1
	})
)

func rectOf(r windows.Rect) native.Rect {
	return native.Rect{X: int(r.Left), Y: int(r.Top), W: int(r.Right - r.Left), H: int(r.Bottom - r.Top)}
}

// Monitors enumerates the display monitors.
func (b *Backend) Monitors(ctx context.Context) ([]native.Monitor, error) {
	monMu.Lock()
	defer monMu.Unlock()
	monList = nil
	if r, _, err := procEnumDisplayMonitors.Call(0, 0, monCB, 0); r == 0 {
		return nil, fmt.Errorf("EnumDisplayMonitors: %w", err)
	}
	out := monList
	monList = nil
	if len(out) == 0 {
		return nil, fmt.Errorf("%w: no monitors", native.ErrUnavailable)
	}
	return out, nil
}

// Capture copies r of the virtual screen with BitBlt (CAPTUREBLT includes
// layered windows) and reads it back as top-down 32-bit BGRA.
func (b *Backend) Capture(ctx context.Context, r native.Rect, scale float64) (*image.RGBA, error) {
	if scale != 1 {
		return nil, fmt.Errorf("%w: scale %g on Windows", native.ErrNotSupported, scale)
	}
	screen, _, _ := procGetDC.Call(0)
	if screen == 0 {
		return nil, fmt.Errorf("%w: GetDC failed", native.ErrUnavailable)
	}
	defer procReleaseDC.Call(0, screen)
	mem, _, _ := procCreateCompatibleDC.Call(screen)
	if mem == 0 {
		return nil, fmt.Errorf("CreateCompatibleDC failed")
	}
	defer procDeleteDC.Call(mem)
	bmp, _, _ := procCreateCompatibleBitmap.Call(screen, uintptr(r.W), uintptr(r.H))
	if bmp == 0 {
		return nil, fmt.Errorf("CreateCompatibleBitmap failed")
	}
	defer procDeleteObject.Call(bmp)
	old, _, _ := procSelectObject.Call(mem, bmp)
	ok, _, err := procBitBlt.Call(mem, 0, 0, uintptr(r.W), uintptr(r.H), screen,
		uintptr(int32(r.X)), uintptr(int32(r.Y)), srccopy|captureblt)
	// GetDIBits wants the bitmap out of any device context.
	procSelectObject.Call(mem, old)
	if ok == 0 {
		if locked() {
			return nil, native.ErrSecureDesktop
		}
		return nil, fmt.Errorf("BitBlt: %w", err)
	}
	hdr := bitmapInfoHeader{width: int32(r.W), height: -int32(r.H), planes: 1, bitCount: 32, compression: biRGB}
	hdr.size = uint32(unsafe.Sizeof(hdr))
	img := image.NewRGBA(image.Rect(0, 0, r.W, r.H))
	// BITMAPINFO is the header followed by a colour table that BI_RGB at
	// 32 bits does not use; 16 spare bytes stand in for it.
	var info struct {
		hdr bitmapInfoHeader
		_   [16]byte
	}
	info.hdr = hdr
	if n, _, _ := procGetDIBits.Call(mem, bmp, 0, uintptr(r.H), uintptr(unsafe.Pointer(&img.Pix[0])),
		uintptr(unsafe.Pointer(&info)), dibRGB); int(n) != r.H {
		return nil, fmt.Errorf("GetDIBits copied %d of %d lines", n, r.H)
	}
	for i := 0; i < len(img.Pix); i += 4 {
		img.Pix[i], img.Pix[i+2], img.Pix[i+3] = img.Pix[i+2], img.Pix[i], 0xff
	}
	return img, nil
}

// Cursor returns the pointer position.
func (b *Backend) Cursor(ctx context.Context) (int, int, error) {
	var p point
	if r, _, err := procGetCursorPos.Call(uintptr(unsafe.Pointer(&p))); r == 0 {
		return 0, 0, fmt.Errorf("GetCursorPos: %w", err)
	}
	return int(p.x), int(p.y), nil
}

func windowRect(h windows.HWND) (native.Rect, bool) {
	var r windows.Rect
	ok, _, _ := procGetWindowRect.Call(uintptr(h), uintptr(unsafe.Pointer(&r)))
	return rectOf(r), ok != 0
}

func windowTitle(h windows.HWND) string {
	var buf [512]uint16
	n, _, _ := procGetWindowTextW.Call(uintptr(h), uintptr(unsafe.Pointer(&buf[0])), uintptr(len(buf)))
	return windows.UTF16ToString(buf[:n])
}

// process returns the executable's base name, its creation time and
// whether it runs elevated (or cannot be inspected, which for a window on
// our own desktop means a more privileged process).
func process(pid uint32) (name string, created int64, elevated bool) {
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	if err != nil {
		return "", 0, true
	}
	defer windows.CloseHandle(h)
	var buf [windows.MAX_PATH]uint16
	n := uint32(len(buf))
	if windows.QueryFullProcessImageName(h, 0, &buf[0], &n) == nil {
		name = filepath.Base(windows.UTF16ToString(buf[:n]))
	}
	var c, e, k, u windows.Filetime
	if windows.GetProcessTimes(h, &c, &e, &k, &u) == nil {
		created = c.Nanoseconds()
	}
	var tok windows.Token
	if windows.OpenProcessToken(h, windows.TOKEN_QUERY, &tok) != nil {
		return name, created, true
	}
	defer tok.Close()
	return name, created, tok.IsElevated()
}

var (
	winMu   sync.Mutex
	winList []windows.HWND
	winCB   = windows.NewCallback(func(h windows.HWND, _ uintptr) uintptr {
		if windows.IsWindowVisible(h) {
			winList = append(winList, h)
		}
		return 1
	})
)

// Windows lists visible titled top-level windows, in z-order (topmost
// first, as EnumWindows gives them).
func (b *Backend) Windows(ctx context.Context) ([]native.Window, error) {
	winMu.Lock()
	winList = nil
	err := windows.EnumWindows(winCB, nil)
	hs := winList
	winList = nil
	winMu.Unlock()
	if err != nil && len(hs) == 0 {
		return nil, fmt.Errorf("EnumWindows: %w", err)
	}
	fg := windows.GetForegroundWindow()
	var out []native.Window
	for _, h := range hs {
		title := windowTitle(h)
		if title == "" {
			continue
		}
		box, ok := windowRect(h)
		if !ok {
			continue
		}
		var pid uint32
		windows.GetWindowThreadProcessId(h, &pid)
		name, created, elevated := process(pid)
		iconic, _, _ := procIsIconic.Call(uintptr(h))
		out = append(out, native.Window{
			Handle: uint64(h), PID: int(pid), Title: title, App: name, Bounds: box,
			Focused: h == fg, Minimized: iconic != 0, Elevated: elevated && !b.elevated, Created: created,
		})
	}
	return out, nil
}

// Focus restores a minimised window and asks for it to be foreground.
// Windows' foreground lock may refuse; that is reported, not worked around.
func (b *Backend) Focus(ctx context.Context, w native.Window) error {
	h := windows.HWND(w.Handle)
	if !windows.IsWindow(h) {
		return native.ErrWindowGone
	}
	if iconic, _, _ := procIsIconic.Call(uintptr(h)); iconic != 0 {
		procShowWindow.Call(uintptr(h), swRestore)
	}
	if r, _, _ := procSetForegroundWindow.Call(uintptr(h)); r == 0 {
		return fmt.Errorf("%w: Windows refused to bring the window to the foreground (foreground lock)", native.ErrNotSupported)
	}
	return nil
}

// State: the session and input desktop, the monitors, the foreground
// window.
func (b *Backend) State(ctx context.Context) (native.State, error) {
	mons, err := b.Monitors(ctx)
	if err != nil {
		return native.State{}, err
	}
	var sid uint32
	windows.ProcessIdToSessionId(windows.GetCurrentProcessId(), &sid)
	desk := inputDesktop()
	st := native.State{Session: fmt.Sprintf("win32|session:%d|%s", sid, desk), Monitors: mons, Locked: !strings.EqualFold(desk, "Default")}
	if fg := windows.GetForegroundWindow(); fg != 0 {
		st.Focus = uint64(fg)
		st.FocusBox, _ = windowRect(fg)
	}
	return st, nil
}
