package win32

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"strings"
	"sync"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"

	"github.com/hostlink/hostlink/internal/desktop/native"
)

// UI Automation without cgo, through the UI Automation core API of
// UIAutomationCore.dll: UiaNodeFromHandle, UiaNavigate and
// UiaGetPropertyValue, the COM-based functions that .NET's
// System.Windows.Automation client is built on. They reach the same
// providers (UIA, or MSAA through UIA's proxies) as the IUIAutomation COM
// client, and unlike that client (CoCreateInstance(CUIAutomation) fails
// with REGDB_E_CLASSNOTREG there) Wine 8 implements them, so the walk is
// tested under Wine.

var (
	uiaCore                    = windows.NewLazySystemDLL("uiautomationcore.dll")
	oleaut32                   = windows.NewLazySystemDLL("oleaut32.dll")
	procUiaNodeFromHandle      = uiaCore.NewProc("UiaNodeFromHandle")
	procUiaNavigate            = uiaCore.NewProc("UiaNavigate")
	procUiaGetPropertyValue    = uiaCore.NewProc("UiaGetPropertyValue")
	procUiaNodeRelease         = uiaCore.NewProc("UiaNodeRelease")
	procUiaHUiaNodeFromVariant = uiaCore.NewProc("UiaHUiaNodeFromVariant")
	procVariantClear           = oleaut32.NewProc("VariantClear")
	procSysFreeString          = oleaut32.NewProc("SysFreeString")
	procSafeArrayGetElement    = oleaut32.NewProc("SafeArrayGetElement")
	procSafeArrayDestroy       = oleaut32.NewProc("SafeArrayDestroy")
)

// UI Automation identifiers (UIAutomationClient.h, UIAutomationCore.h).
const (
	propBoundingRectangle    = 30001
	propLocalizedControlType = 30004
	propName                 = 30005
	propIsControlElement     = 30016
	propIsOffscreen          = 30022

	navFirstChild  = 2
	navNextSibling = 3

	conditionTrue    = 0
	treeScopeElement = 1
	elementModeFull  = 1
)

// VARIANT types.
const (
	vtR8      = 5
	vtBSTR    = 8
	vtBool    = 11
	vtUnknown = 13
	vtArray   = 0x2000
)

// ReasonNoElement: UI Automation gives no element for the foreground
// window (no provider, and none through UIA's MSAA proxy; Wine 8 has
// no such proxy).
const ReasonNoElement = "uia_element_unavailable"

// Bounds of one accessibility walk, as on AT-SPI.
const (
	uiaTimeout  = 8 * time.Second
	uiaMaxNodes = 2000
	maxNameRune = 200
)

// variant is a VARIANT (24 bytes on 64-bit Windows): its type and the
// first word of its value.
type variant struct {
	vt  uint16
	_   [3]uint16
	val unsafe.Pointer // not Go memory: a BSTR, a SAFEARRAY, a VT_BOOL's bits
	_   uintptr
}

func (v *variant) clear() { procVariantClear.Call(uintptr(unsafe.Pointer(v))) }

// uiaCondition and uiaCacheRequest are UiaCondition and UiaCacheRequest.
type uiaCondition struct{ conditionType int32 }

type uiaCacheRequest struct {
	viewCondition *uiaCondition
	scope         int32
	properties    uintptr
	nProperties   int32
	patterns      uintptr
	nPatterns     int32
	elementMode   int32
}

var (
	trueCondition = &uiaCondition{conditionType: conditionTrue}
	// nodeOnly asks a navigation for the node it reaches, no properties.
	nodeOnly = &uiaCacheRequest{viewCondition: trueCondition, scope: treeScopeElement, elementMode: elementModeFull}
)

// node is an HUIANODE.
type node uintptr

func (n node) release() {
	if n != 0 {
		procUiaNodeRelease.Call(uintptr(n))
	}
}

// property reads one property; ok is false when the element does not
// support it (a failure, an empty or a reserved value).
func (n node) property(id int) (v *variant, ok bool) {
	v = new(variant)
	hr, _, _ := procUiaGetPropertyValue.Call(uintptr(n), uintptr(id), uintptr(unsafe.Pointer(v)))
	if int32(hr) < 0 || v.vt == 0 || v.vt == vtUnknown {
		v.clear()
		return nil, false
	}
	return v, true
}

func (n node) str(id int) string {
	v, ok := n.property(id)
	if !ok {
		return ""
	}
	defer v.clear()
	if v.vt != vtBSTR || v.val == nil {
		return ""
	}
	return windows.UTF16PtrToString((*uint16)(v.val))
}

// boolean reads a VT_BOOL property, def when the element does not have it.
func (n node) boolean(id int, def bool) bool {
	v, ok := n.property(id)
	if !ok {
		return def
	}
	defer v.clear()
	if v.vt != vtBool {
		return def
	}
	return int16(uintptr(v.val)) != 0
}

// bounds reads BoundingRectangle: a SAFEARRAY of four doubles, left, top,
// width and height in physical screen pixels.
func (n node) bounds() native.Rect {
	v, ok := n.property(propBoundingRectangle)
	if !ok {
		return native.Rect{}
	}
	defer v.clear()
	if v.vt != vtArray|vtR8 || v.val == nil {
		return native.Rect{}
	}
	var r [4]float64
	for i := range r {
		idx := int32(i)
		if hr, _, _ := procSafeArrayGetElement.Call(uintptr(v.val), uintptr(unsafe.Pointer(&idx)), uintptr(unsafe.Pointer(&r[i]))); int32(hr) < 0 {
			return native.Rect{}
		}
	}
	return native.Rect{X: int(r[0]), Y: int(r[1]), W: int(r[2]), H: int(r[3])}
}

// navigate returns the node in direction dir from n, 0 when there is none.
func (n node) navigate(dir int) (node, error) {
	var sa uintptr
	var tree *uint16
	hr, _, _ := procUiaNavigate.Call(uintptr(n), uintptr(dir), uintptr(unsafe.Pointer(trueCondition)),
		uintptr(unsafe.Pointer(nodeOnly)), uintptr(unsafe.Pointer(&sa)), uintptr(unsafe.Pointer(&tree)))
	if tree != nil {
		procSysFreeString.Call(uintptr(unsafe.Pointer(tree)))
	}
	if int32(hr) < 0 {
		return 0, fmt.Errorf("UiaNavigate: HRESULT %#08x", uint32(hr))
	}
	if sa == 0 {
		return 0, nil
	}
	defer procSafeArrayDestroy.Call(sa)
	// The requested data is a 2-D array whose element [0, 0] holds the
	// node; SafeArrayGetElement copies it (with a reference of its own,
	// which UiaNodeRelease gives back).
	idx := [2]int32{0, 0}
	v := new(variant)
	if hr, _, _ := procSafeArrayGetElement.Call(sa, uintptr(unsafe.Pointer(&idx)), uintptr(unsafe.Pointer(v))); int32(hr) < 0 {
		return 0, fmt.Errorf("SafeArrayGetElement: HRESULT %#08x", uint32(hr))
	}
	var out node
	if hr, _, _ := procUiaHUiaNodeFromVariant.Call(uintptr(unsafe.Pointer(v)), uintptr(unsafe.Pointer(&out))); int32(hr) < 0 || out == 0 {
		v.clear()
		return 0, fmt.Errorf("UiaHUiaNodeFromVariant: HRESULT %#08x", uint32(hr))
	}
	return out, nil
}

// uiaAvailable reports whether this system has the UI Automation core.
func uiaAvailable() error {
	for _, p := range []*windows.LazyProc{procUiaNodeFromHandle, procUiaNavigate, procUiaGetPropertyValue,
		procUiaNodeRelease, procUiaHUiaNodeFromVariant} {
		if err := p.Find(); err != nil {
			return fmt.Errorf("%w: UI Automation is not available: %v", native.ErrNotSupported, err)
		}
	}
	return nil
}

// onCOMThread runs fn on a locked OS thread in the multithreaded
// apartment. It returns when fn does or ctx ends; in the latter case fn
// goes on until its next check of ctx, then releases everything.
func onCOMThread(ctx context.Context, fn func() error) error {
	done := make(chan error, 1)
	go func() {
		runtime.LockOSThread()
		defer runtime.UnlockOSThread()
		if err := windows.CoInitializeEx(0, windows.COINIT_MULTITHREADED); err != nil && !errors.Is(err, syscall.Errno(1)) { // S_FALSE: already initialised
			done <- fmt.Errorf("CoInitializeEx: %w", err)
			return
		}
		defer windows.CoUninitialize()
		done <- fn()
	}()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		return ctx.Err()
	}
}

// AccessibilityTree walks the foreground window's UI Automation control
// view, depth first, up to maxNodes elements and the deadline.
func (b *Backend) AccessibilityTree(ctx context.Context, maxNodes int) ([]native.Element, error) {
	fg := windows.GetForegroundWindow()
	if fg == 0 {
		return nil, native.Refuse(native.ErrNotSupported, "no_foreground_window", "no window is in the foreground")
	}
	if b.foregroundElevated(fg) {
		return nil, native.Refuse(native.ErrPermission, "target_elevated",
			"the foreground window belongs to an elevated process, which UI Automation does not let this process read")
	}
	ctx, cancel := context.WithTimeout(ctx, uiaTimeout)
	defer cancel()
	maxNodes = min(maxNodes, uiaMaxNodes)
	var (
		mu  sync.Mutex
		out []native.Element
	)
	err := onCOMThread(ctx, func() error {
		if err := uiaAvailable(); err != nil {
			return err
		}
		var root node
		if hr, _, _ := procUiaNodeFromHandle.Call(uintptr(fg), uintptr(unsafe.Pointer(&root))); int32(hr) < 0 || root == 0 {
			return native.Refuse(native.ErrNotSupported, ReasonNoElement,
				fmt.Sprintf("UI Automation has no element for the foreground window (UiaNodeFromHandle: HRESULT %#08x)", uint32(hr)))
		}
		defer root.release()
		seen := 0
		var walk func(n node, depth int)
		walk = func(n node, depth int) {
			if seen >= maxNodes || ctx.Err() != nil {
				return
			}
			seen++
			// Elements outside the control view (a frame's parts) are
			// walked through but not listed.
			if depth == 0 || n.boolean(propIsControlElement, true) {
				el := describeElement(n, depth)
				mu.Lock()
				out = append(out, el)
				mu.Unlock()
			} else {
				depth--
			}
			child, err := n.navigate(navFirstChild)
			for err == nil && child != 0 {
				walk(child, depth+1)
				if seen >= maxNodes || ctx.Err() != nil {
					child.release()
					return
				}
				next, nerr := child.navigate(navNextSibling)
				child.release()
				child, err = next, nerr
			}
		}
		walk(root, 0)
		return nil
	})
	mu.Lock()
	got := append([]native.Element(nil), out...)
	mu.Unlock()
	if errors.Is(err, context.DeadlineExceeded) && len(got) > 0 {
		return got, nil // what the deadline left
	}
	return got, err
}

// describeElement reads an element's role, name and bounds. A password
// field's name is its label, never its content, which is not read.
func describeElement(n node, depth int) native.Element {
	el := native.Element{Depth: depth, Role: n.str(propLocalizedControlType), Name: n.str(propName)}
	if el.Role == "" {
		el.Role = "element"
	}
	if r := []rune(el.Name); len(r) > maxNameRune {
		el.Name = string(r[:maxNameRune]) + "…"
	}
	el.Name = strings.Join(strings.Fields(el.Name), " ")
	if !n.boolean(propIsOffscreen, false) {
		if b := n.bounds(); !b.Empty() {
			el.Bounds = b
		}
	}
	return el
}

// foregroundElevated reports whether the foreground window's process runs
// at a higher integrity than this one.
func (b *Backend) foregroundElevated(fg windows.HWND) bool {
	if b.elevated {
		return false
	}
	var pid uint32
	windows.GetWindowThreadProcessId(fg, &pid)
	_, _, elevated := process(pid)
	return elevated
}

// Accessibility is the tree as indented "role: name" lines (without bounds,
// which the core adds in image coordinates through AccessibilityTree).
func (b *Backend) Accessibility(ctx context.Context, max int) (string, error) {
	els, err := b.AccessibilityTree(ctx, uiaMaxNodes)
	if err != nil {
		return "", err
	}
	var sb strings.Builder
	for _, e := range els {
		line := strings.Repeat("  ", e.Depth) + e.Role
		if e.Name != "" {
			line += ": " + e.Name
		}
		if sb.Len()+len(line)+1 > max {
			break
		}
		sb.WriteString(line + "\n")
	}
	return sb.String(), nil
}

// uiaStatus says whether accessibility can be read now.
func (b *Backend) uiaStatus() native.Readiness {
	if err := uiaAvailable(); err != nil {
		return native.Readiness{Reason: "uia_unavailable", Detail: err.Error()}
	}
	if fg := windows.GetForegroundWindow(); fg != 0 && b.foregroundElevated(fg) {
		return native.Readiness{Reason: "target_elevated", Detail: "the foreground window belongs to an elevated process, which UI Automation does not let this process read"}
	}
	return native.Readiness{Ready: true}
}
