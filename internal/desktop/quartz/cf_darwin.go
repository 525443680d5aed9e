package quartz

import (
	"fmt"
	"sync"
	"unsafe"

	"github.com/ebitengine/purego"
)

// CGPoint, CGSize and CGRect as CoreGraphics lays them out (CGFloat is a
// double on 64-bit macOS).
type (
	cgPoint struct{ X, Y float64 }
	cgSize  struct{ W, H float64 }
	cgRect  struct {
		Origin cgPoint
		Size   cgSize
	}
)

const (
	cfStringEncodingUTF8 = 0x08000100
	cfNumberSInt64Type   = 4
)

// Bindings, filled by load.
var (
	cfRelease                   func(uintptr)
	cfArrayGetCount             func(uintptr) int
	cfArrayGetValueAtIndex      func(uintptr, int) uintptr
	cfDictionaryGetValue        func(uintptr, uintptr) uintptr
	cfNumberGetValue            func(uintptr, int, unsafe.Pointer) bool
	cfStringCreateWithCString   func(uintptr, string, uint32) uintptr
	cfStringGetCString          func(uintptr, *byte, int, uint32) bool
	cfBooleanGetValue           func(uintptr) bool
	cfGetTypeID                 func(uintptr) uintptr
	cfBooleanGetTypeID          func() uintptr
	cfNumberGetTypeID           func() uintptr
	cgGetActiveDisplayList      func(uint32, *uint32, *uint32) int32
	cgMainDisplayID             func() uint32
	cgDisplayBounds             func(uint32) cgRect
	cgDisplayCopyDisplayMode    func(uint32) uintptr
	cgDisplayModeGetPixelWidth  func(uintptr) uintptr
	cgDisplayModeRelease        func(uintptr)
	cgWindowListCopyWindowInfo  func(uint32, uint32) uintptr
	cgRectMakeWithDictionary    func(uintptr, *cgRect) bool
	cgPreflightScreenCapture    func() bool
	axIsProcessTrusted          func() bool
	cgSessionCopyCurrentDict    func() uintptr
	cgEventCreate               func(uintptr) uintptr
	cgEventGetLocation          func(uintptr) cgPoint
	cgEventCreateMouseEvent     func(uintptr, uint32, cgPoint, uint32) uintptr
	cgEventCreateKeyboardEvent  func(uintptr, uint16, bool) uintptr
	cgEventKeyboardSetUnicode   func(uintptr, int, *uint16)
	cgEventSetFlags             func(uintptr, uint64)
	cgEventSetIntegerValueField func(uintptr, uint32, int64)
	cgEventCreateScrollWheel2   func(uintptr, uint32, uint32, int32, int32, int32) uintptr
	cgEventPost                 func(uint32, uintptr)
	cgColorSpaceCreateDeviceRGB func() uintptr
	cgColorSpaceRelease         func(uintptr)
	cgBitmapContextCreate       func(unsafe.Pointer, uintptr, uintptr, uintptr, uintptr, uintptr, uint32) uintptr
	cgContextDrawImage          func(uintptr, cgRect, uintptr)
	cgContextRelease            func(uintptr)
	cgImageGetWidth             func(uintptr) uintptr
	cgImageRelease              func(uintptr)
	axUIElementCreateApp        func(int32) uintptr
	axUIElementCopyAttribute    func(uintptr, uintptr, *uintptr) int32
	axUIElementPerformAction    func(uintptr, uintptr) int32
	axUIElementSetAttribute     func(uintptr, uintptr, uintptr) int32

	// cgWindowListCreateImage is absent from macOS versions that dropped
	// it; capture checks for nil.
	cgWindowListCreateImage func(cgRect, uint32, uint32, uint32) uintptr
)

var (
	loadOnce sync.Once
	loadErr  error
)

const (
	cfPath  = "/System/Library/Frameworks/CoreFoundation.framework/CoreFoundation"
	cgPath  = "/System/Library/Frameworks/CoreGraphics.framework/CoreGraphics"
	appPath = "/System/Library/Frameworks/ApplicationServices.framework/ApplicationServices"
)

// load opens the frameworks and binds every function once.
func load() error {
	loadOnce.Do(func() {
		defer func() {
			// RegisterLibFunc panics on a missing symbol.
			if r := recover(); r != nil {
				loadErr = fmt.Errorf("binding macOS frameworks: %v", r)
			}
		}()
		cf, err := purego.Dlopen(cfPath, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			loadErr = err
			return
		}
		cg, err := purego.Dlopen(cgPath, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			loadErr = err
			return
		}
		app, err := purego.Dlopen(appPath, purego.RTLD_NOW|purego.RTLD_GLOBAL)
		if err != nil {
			loadErr = err
			return
		}
		bind := func(fn any, lib uintptr, name string) { purego.RegisterLibFunc(fn, lib, name) }
		bind(&cfRelease, cf, "CFRelease")
		bind(&cfArrayGetCount, cf, "CFArrayGetCount")
		bind(&cfArrayGetValueAtIndex, cf, "CFArrayGetValueAtIndex")
		bind(&cfDictionaryGetValue, cf, "CFDictionaryGetValue")
		bind(&cfNumberGetValue, cf, "CFNumberGetValue")
		bind(&cfStringCreateWithCString, cf, "CFStringCreateWithCString")
		bind(&cfStringGetCString, cf, "CFStringGetCString")
		bind(&cfBooleanGetValue, cf, "CFBooleanGetValue")
		bind(&cfGetTypeID, cf, "CFGetTypeID")
		bind(&cfBooleanGetTypeID, cf, "CFBooleanGetTypeID")
		bind(&cfNumberGetTypeID, cf, "CFNumberGetTypeID")
		bind(&cgGetActiveDisplayList, cg, "CGGetActiveDisplayList")
		bind(&cgMainDisplayID, cg, "CGMainDisplayID")
		bind(&cgDisplayBounds, cg, "CGDisplayBounds")
		bind(&cgDisplayCopyDisplayMode, cg, "CGDisplayCopyDisplayMode")
		bind(&cgDisplayModeGetPixelWidth, cg, "CGDisplayModeGetPixelWidth")
		bind(&cgDisplayModeRelease, cg, "CGDisplayModeRelease")
		bind(&cgWindowListCopyWindowInfo, cg, "CGWindowListCopyWindowInfo")
		bind(&cgRectMakeWithDictionary, cg, "CGRectMakeWithDictionaryRepresentation")
		bind(&cgPreflightScreenCapture, cg, "CGPreflightScreenCaptureAccess")
		bind(&cgSessionCopyCurrentDict, cg, "CGSessionCopyCurrentDictionary")
		bind(&cgEventCreate, cg, "CGEventCreate")
		bind(&cgEventGetLocation, cg, "CGEventGetLocation")
		bind(&cgEventCreateMouseEvent, cg, "CGEventCreateMouseEvent")
		bind(&cgEventCreateKeyboardEvent, cg, "CGEventCreateKeyboardEvent")
		bind(&cgEventKeyboardSetUnicode, cg, "CGEventKeyboardSetUnicodeString")
		bind(&cgEventSetFlags, cg, "CGEventSetFlags")
		bind(&cgEventSetIntegerValueField, cg, "CGEventSetIntegerValueField")
		bind(&cgEventCreateScrollWheel2, cg, "CGEventCreateScrollWheelEvent2")
		bind(&cgEventPost, cg, "CGEventPost")
		bind(&cgColorSpaceCreateDeviceRGB, cg, "CGColorSpaceCreateDeviceRGB")
		bind(&cgColorSpaceRelease, cg, "CGColorSpaceRelease")
		bind(&cgBitmapContextCreate, cg, "CGBitmapContextCreate")
		bind(&cgContextDrawImage, cg, "CGContextDrawImage")
		bind(&cgContextRelease, cg, "CGContextRelease")
		bind(&cgImageGetWidth, cg, "CGImageGetWidth")
		bind(&cgImageRelease, cg, "CGImageRelease")
		bind(&axIsProcessTrusted, app, "AXIsProcessTrusted")
		bind(&axUIElementCreateApp, app, "AXUIElementCreateApplication")
		bind(&axUIElementCopyAttribute, app, "AXUIElementCopyAttributeValue")
		bind(&axUIElementPerformAction, app, "AXUIElementPerformAction")
		bind(&axUIElementSetAttribute, app, "AXUIElementSetAttributeValue")
		if _, err := purego.Dlsym(cg, "CGWindowListCreateImage"); err == nil {
			bind(&cgWindowListCreateImage, cg, "CGWindowListCreateImage")
		}
	})
	return loadErr
}

// cfstr returns a CFString the caller releases.
func cfstr(s string) uintptr { return cfStringCreateWithCString(0, s, cfStringEncodingUTF8) }

// gostr converts a CFString (nil: "").
func gostr(s uintptr) string {
	if s == 0 {
		return ""
	}
	buf := make([]byte, 1024)
	if !cfStringGetCString(s, &buf[0], len(buf), cfStringEncodingUTF8) {
		return ""
	}
	for i, b := range buf {
		if b == 0 {
			return string(buf[:i])
		}
	}
	return string(buf)
}

// dictInt reads an integer value of a CFDictionary by key.
func dictInt(d uintptr, key string) (int64, bool) {
	k := cfstr(key)
	defer cfRelease(k)
	v := cfDictionaryGetValue(d, k)
	if v == 0 || cfGetTypeID(v) != cfNumberGetTypeID() {
		return 0, false
	}
	var n int64
	return n, cfNumberGetValue(v, cfNumberSInt64Type, unsafe.Pointer(&n))
}

// dictBool reads a boolean value of a CFDictionary by key.
func dictBool(d uintptr, key string) bool {
	k := cfstr(key)
	defer cfRelease(k)
	v := cfDictionaryGetValue(d, k)
	return v != 0 && cfGetTypeID(v) == cfBooleanGetTypeID() && cfBooleanGetValue(v)
}

func dictString(d uintptr, key string) string {
	k := cfstr(key)
	defer cfRelease(k)
	return gostr(cfDictionaryGetValue(d, k))
}

func dictValue(d uintptr, key string) uintptr {
	k := cfstr(key)
	defer cfRelease(k)
	return cfDictionaryGetValue(d, k)
}
