package quartz

import (
	"context"
	"fmt"
	"image"
	"math"
	"unsafe"

	"github.com/ebitengine/purego/objc"

	"github.com/hostlink/hostlink/internal/desktop/native"
)

// CGWindowList options and image flags.
const (
	kCGWindowListOptionOnScreenOnly     = 1 << 0
	kCGWindowListExcludeDesktopElements = 1 << 4
	kCGNullWindowID                     = 0
	kCGWindowImageDefault               = 0
	kCGWindowImageBestResolution        = 1 << 3

	// kCGImageAlphaPremultipliedLast | kCGBitmapByteOrder32Big: RGBA bytes.
	bitmapRGBA = 1 | 4<<12
)

// Backend is the logged-in user's macOS desktop.
type Backend struct {
	clicks clickState
	flags  uint64 // modifier flags held by this request's key steps
}

// Open binds the frameworks.
func Open() (*Backend, error) {
	if err := load(); err != nil {
		return nil, fmt.Errorf("%w: %v", native.ErrUnavailable, err)
	}
	return &Backend{}, nil
}

// ID names the console session's desktop.
func (b *Backend) ID() string { return "quartz:console" }

// Space: Quartz global display points.
func (b *Backend) Space() string { return "points" }

// Close releases nothing: every object is per call.
func (b *Backend) Close() error { return nil }

func pending(what string) native.Readiness {
	return native.Readiness{Reason: "permission_pending",
		Detail: "macOS " + what + " permission is not granted to hostlink (System Settings → Privacy & Security → " + what + ")"}
}

// Status checks the two TCC grants without prompting.
func (b *Backend) Status(ctx context.Context) native.Status {
	ok := native.Readiness{Ready: true}
	st := native.Status{Capture: ok, Input: ok, Windows: ok, Accessibility: native.Readiness{
		Reason: "ax_text_not_implemented", Detail: "accessibility text is not implemented on macOS yet"}}
	if !cgPreflightScreenCapture() {
		st.Capture = pending("Screen Recording")
		// Window titles need Screen Recording too.
		st.Windows = st.Capture
	} else if cgWindowListCreateImage == nil {
		st.Capture = native.Readiness{Reason: "capture_api_unavailable", Detail: "this macOS lacks CGWindowListCreateImage; ScreenCaptureKit is not implemented"}
	}
	if !axIsProcessTrusted() {
		st.Input = pending("Accessibility")
	}
	if b.locked() {
		l := native.Readiness{Reason: "session_locked", Detail: "the screen is locked"}
		st.Capture, st.Input = l, l
	}
	return st
}

// session returns the console session's user id and lock state.
func (b *Backend) session() (uid int64, locked bool) {
	d := cgSessionCopyCurrentDict()
	if d == 0 {
		return -1, true // no window-server session: nothing is reachable
	}
	defer cfRelease(d)
	uid, _ = dictInt(d, "kCGSSessionUserIDKey")
	return uid, dictBool(d, "CGSSessionScreenIsLocked") || !dictBool(d, "kCGSSessionOnConsoleKey")
}

func (b *Backend) locked() bool { _, l := b.session(); return l }

// Monitors lists the active displays in points, with the backing scale.
func (b *Backend) Monitors(ctx context.Context) ([]native.Monitor, error) {
	var ids [16]uint32
	var n uint32
	if rc := cgGetActiveDisplayList(uint32(len(ids)), &ids[0], &n); rc != 0 || n == 0 {
		return nil, fmt.Errorf("%w: CGGetActiveDisplayList %d", native.ErrUnavailable, rc)
	}
	main := cgMainDisplayID()
	out := make([]native.Monitor, 0, n)
	for i, id := range ids[:n] {
		r := cgDisplayBounds(id)
		scale := 1.0
		if mode := cgDisplayCopyDisplayMode(id); mode != 0 {
			if px := cgDisplayModeGetPixelWidth(mode); px > 0 && r.Size.W > 0 {
				scale = float64(px) / r.Size.W
			}
			cgDisplayModeRelease(mode)
		}
		out = append(out, native.Monitor{
			Index: i, Name: fmt.Sprintf("display-%d", id), Primary: id == main,
			Bounds: native.Rect{X: int(r.Origin.X), Y: int(r.Origin.Y), W: int(r.Size.W), H: int(r.Size.H)},
			Scale:  scale, DisplayScale: scale,
		})
	}
	return out, nil
}

// Capture renders r (points) at scale into an RGBA bitmap we own.
func (b *Backend) Capture(ctx context.Context, r native.Rect, scale float64) (*image.RGBA, error) {
	if !cgPreflightScreenCapture() {
		return nil, fmt.Errorf("%w: Screen Recording", native.ErrPermission)
	}
	if cgWindowListCreateImage == nil {
		return nil, fmt.Errorf("%w: CGWindowListCreateImage is gone from this macOS", native.ErrNotSupported)
	}
	rect := cgRect{cgPoint{float64(r.X), float64(r.Y)}, cgSize{float64(r.W), float64(r.H)}}
	cgimg := cgWindowListCreateImage(rect, kCGWindowListOptionOnScreenOnly, kCGNullWindowID, kCGWindowImageBestResolution)
	if cgimg == 0 {
		return nil, fmt.Errorf("CGWindowListCreateImage returned no image")
	}
	defer cgImageRelease(cgimg)
	w, h := int(math.Round(float64(r.W)*scale)), int(math.Round(float64(r.H)*scale))
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	cs := cgColorSpaceCreateDeviceRGB()
	defer cgColorSpaceRelease(cs)
	ctx2 := cgBitmapContextCreate(unsafe.Pointer(&img.Pix[0]), uintptr(w), uintptr(h), 8, uintptr(img.Stride), cs, bitmapRGBA)
	if ctx2 == 0 {
		return nil, fmt.Errorf("CGBitmapContextCreate failed")
	}
	cgContextDrawImage(ctx2, cgRect{Size: cgSize{float64(w), float64(h)}}, cgimg)
	cgContextRelease(ctx2)
	return img, nil
}

// Cursor reads the pointer location from a fresh event.
func (b *Backend) Cursor(ctx context.Context) (int, int, error) {
	e := cgEventCreate(0)
	if e == 0 {
		return 0, 0, fmt.Errorf("CGEventCreate failed")
	}
	defer cfRelease(e)
	p := cgEventGetLocation(e)
	return int(p.X), int(p.Y), nil
}

// Windows lists on-screen windows of the normal layer, front to back.
func (b *Backend) Windows(ctx context.Context) ([]native.Window, error) {
	arr := cgWindowListCopyWindowInfo(kCGWindowListOptionOnScreenOnly|kCGWindowListExcludeDesktopElements, kCGNullWindowID)
	if arr == 0 {
		return nil, fmt.Errorf("%w: CGWindowListCopyWindowInfo", native.ErrUnavailable)
	}
	defer cfRelease(arr)
	var out []native.Window
	for i := range cfArrayGetCount(arr) {
		d := cfArrayGetValueAtIndex(arr, i)
		if layer, _ := dictInt(d, "kCGWindowLayer"); layer != 0 {
			continue
		}
		num, _ := dictInt(d, "kCGWindowNumber")
		pid, _ := dictInt(d, "kCGWindowOwnerPID")
		var r cgRect
		if bd := dictValue(d, "kCGWindowBounds"); bd != 0 {
			cgRectMakeWithDictionary(bd, &r)
		}
		out = append(out, native.Window{
			Handle: uint64(num), PID: int(pid), Title: dictString(d, "kCGWindowName"),
			App:    dictString(d, "kCGWindowOwnerName"),
			Bounds: native.Rect{X: int(r.Origin.X), Y: int(r.Origin.Y), W: int(r.Size.W), H: int(r.Size.H)},
		})
	}
	if len(out) > 0 {
		out[0].Focused = true // the frontmost normal window
	}
	return out, nil
}

// Focus activates the window's application and raises the window through
// Accessibility (matched by title, as window numbers are not exposed).
func (b *Backend) Focus(ctx context.Context, w native.Window) error {
	if !axIsProcessTrusted() {
		return fmt.Errorf("%w: Accessibility", native.ErrPermission)
	}
	ws, err := b.Windows(ctx)
	if err != nil {
		return err
	}
	found := false
	for _, cur := range ws {
		found = found || cur.Handle == w.Handle
	}
	if !found {
		return native.ErrWindowGone
	}
	app := objc.ID(objc.GetClass("NSRunningApplication")).Send(
		objc.RegisterName("runningApplicationWithProcessIdentifier:"), int32(w.PID))
	if app == 0 {
		return native.ErrWindowGone
	}
	// NSApplicationActivateIgnoringOtherApps
	app.Send(objc.RegisterName("activateWithOptions:"), uint64(2))
	ax := axUIElementCreateApp(int32(w.PID))
	if ax == 0 {
		return nil
	}
	defer cfRelease(ax)
	attr := cfstr("AXWindows")
	defer cfRelease(attr)
	var list uintptr
	if axUIElementCopyAttribute(ax, attr, &list) != 0 || list == 0 {
		return nil
	}
	defer cfRelease(list)
	title, raise := cfstr("AXTitle"), cfstr("AXRaise")
	defer cfRelease(title)
	defer cfRelease(raise)
	for i := range cfArrayGetCount(list) {
		win := cfArrayGetValueAtIndex(list, i)
		var t uintptr
		if axUIElementCopyAttribute(win, title, &t) == 0 && t != 0 {
			match := gostr(t) == w.Title
			cfRelease(t)
			if match {
				axUIElementPerformAction(win, raise)
				break
			}
		}
	}
	return nil
}

// State: the console user and lock state, the displays, the frontmost
// window.
func (b *Backend) State(ctx context.Context) (native.State, error) {
	mons, err := b.Monitors(ctx)
	if err != nil {
		return native.State{}, err
	}
	uid, locked := b.session()
	st := native.State{Session: fmt.Sprintf("quartz|uid:%d", uid), Monitors: mons, Locked: locked}
	if ws, err := b.Windows(ctx); err == nil && len(ws) > 0 {
		st.Focus, st.FocusBox = ws[0].Handle, ws[0].Bounds
	}
	return st, nil
}

// Accessibility text is not implemented on macOS.
func (b *Backend) Accessibility(ctx context.Context, max int) (string, error) {
	return "", fmt.Errorf("%w: accessibility text on macOS", native.ErrNotSupported)
}
