package native

import (
	"context"
	"errors"
	"image"
	"time"
)

// Rect is a rectangle in native coordinates: origin and size.
type Rect struct {
	X int `json:"x"`
	Y int `json:"y"`
	W int `json:"w"`
	H int `json:"h"`
}

// Empty reports whether r has no area.
func (r Rect) Empty() bool { return r.W <= 0 || r.H <= 0 }

// Contains reports whether the point is inside r.
func (r Rect) Contains(x, y int) bool {
	return x >= r.X && y >= r.Y && x < r.X+r.W && y < r.Y+r.H
}

// Intersect returns the part of r inside s (empty if none).
func (r Rect) Intersect(s Rect) Rect {
	x0, y0 := max(r.X, s.X), max(r.Y, s.Y)
	x1, y1 := min(r.X+r.W, s.X+s.W), min(r.Y+r.H, s.Y+s.H)
	if x1 <= x0 || y1 <= y0 {
		return Rect{}
	}
	return Rect{x0, y0, x1 - x0, y1 - y0}
}

// Union returns the smallest rectangle holding r and s.
func (r Rect) Union(s Rect) Rect {
	if r.Empty() {
		return s
	}
	if s.Empty() {
		return r
	}
	x0, y0 := min(r.X, s.X), min(r.Y, s.Y)
	x1, y1 := max(r.X+r.W, s.X+s.W), max(r.Y+r.H, s.Y+s.H)
	return Rect{x0, y0, x1 - x0, y1 - y0}
}

// Monitor is one display.
type Monitor struct {
	Index   int     `json:"index"`
	Name    string  `json:"name,omitempty"`
	Primary bool    `json:"primary,omitempty"`
	Bounds  Rect    `json:"bounds"` // native coordinates
	Scale   float64 `json:"scale"`  // image (physical) pixels per native unit
	// DisplayScale is the OS's UI scale for the monitor (Windows DPI/96,
	// the macOS backing factor), when it differs from Scale's meaning.
	DisplayScale float64 `json:"display_scale,omitempty"`
}

// Window is one top-level window as the platform lists it.
type Window struct {
	Handle    uint64 `json:"-"` // native handle, never shown to callers
	PID       int    `json:"pid,omitempty"`
	Title     string `json:"title"`
	App       string `json:"app,omitempty"` // class, process or bundle name
	Bounds    Rect   `json:"bounds"`
	Focused   bool   `json:"focused,omitempty"`
	Minimized bool   `json:"minimized,omitempty"`
	// Elevated: the window belongs to a process input cannot reach (a
	// UAC-elevated window on Windows); it is listed, not acted on.
	Elevated bool `json:"elevated,omitempty"`
	// Created distinguishes a reused handle from the window first seen
	// (creation time or another per-window constant where the platform has
	// one; zero otherwise).
	Created int64 `json:"-"`
}

// State is what drift is judged on: the session, the monitors and the
// focused window. Two equal States mean nothing the core can see moved.
type State struct {
	Session  string    // changes when the display server or login session does
	Monitors []Monitor // geometry and scale
	Focus    uint64    // focused window handle (0: none)
	FocusBox Rect      // its bounds
	Locked   bool      // the session is locked or on a secure desktop
}

// Button is a mouse button.
type Button int

// Buttons.
const (
	Left Button = iota + 1
	Middle
	Right
)

// StepKind says what one input step does.
type StepKind int

// Input steps. Every higher-level action (click, drag along a path,
// hold_key, type) is a sequence of these.
const (
	Move       StepKind = iota + 1 // pointer to (X, Y)
	ButtonDown                     // press Button
	ButtonUp                       // release Button
	Wheel                          // DX, DY wheel units (120 per notch, positive right/down)
	KeyDown                        // press Key
	KeyUp                          // release Key
	Text                           // type Text literally, without the clipboard
	Pause                          // wait Delay
)

// Step is one input step.
type Step struct {
	Kind   StepKind
	X, Y   int // Move: native coordinates
	Button Button
	DX, DY int
	Key    string // KeyDown/KeyUp: a key name from Keys or one character
	Text   string
	Delay  time.Duration
}

// Readiness is whether a backend can serve a kind of request, and why not.
type Readiness struct {
	Ready  bool   `json:"ready"`
	Reason string `json:"reason,omitempty"` // a code such as no_display, wayland, wsl2, permission_pending
	Detail string `json:"detail,omitempty"`
}

// Status is a backend's readiness per concern.
type Status struct {
	Capture       Readiness `json:"capture"`
	Input         Readiness `json:"input"`
	Windows       Readiness `json:"windows"`
	Accessibility Readiness `json:"accessibility"`
}

// Backend is one desktop reached through one native API. Its methods are
// called one at a time: the core serializes every request for a desktop
// through one queue.
type Backend interface {
	// ID names the desktop, stable while its session lasts: "x11::0",
	// "win32:console", "quartz:main".
	ID() string
	// Space names the native coordinate space ("pixels" or "points").
	Space() string
	Status(ctx context.Context) Status
	State(ctx context.Context) (State, error)
	Monitors(ctx context.Context) ([]Monitor, error)
	Windows(ctx context.Context) ([]Window, error)
	// Capture returns the pixels of r (native coordinates) as an image of
	// r's size times scale (the monitors' Scale). Parts outside every
	// monitor are black.
	Capture(ctx context.Context, r Rect, scale float64) (*image.RGBA, error)
	Cursor(ctx context.Context) (x, y int, err error)
	// Dispatch runs steps in order and returns how many went through. An
	// error after some steps means a partial dispatch; n counts them.
	Dispatch(ctx context.Context, steps []Step) (n int, err error)
	// Focus activates (and raises) a window.
	Focus(ctx context.Context, w Window) error
	// Accessibility returns up to max bytes of text describing the focused
	// application's accessible elements.
	Accessibility(ctx context.Context, max int) (string, error)
	Close() error
}

// Errors a backend returns that the core maps to typed codes.
var (
	ErrUnmappedKey   = errors.New("key has no mapping on this keyboard")
	ErrUnavailable   = errors.New("desktop unavailable")
	ErrPermission    = errors.New("os permission missing")
	ErrWindowGone    = errors.New("window no longer exists")
	ErrNotSupported  = errors.New("not supported by this backend")
	ErrSecureDesktop = errors.New("secure desktop or locked session")
)

// Keys lists the named keys every backend maps (besides single characters).
var Keys = []string{
	"enter", "tab", "esc", "space", "backspace", "delete", "insert",
	"up", "down", "left", "right", "home", "end", "pageup", "pagedown",
	"shift", "ctrl", "alt", "super", "capslock", "menu", "printscreen",
	"f1", "f2", "f3", "f4", "f5", "f6", "f7", "f8", "f9", "f10", "f11", "f12",
	"f13", "f14", "f15", "f16", "f17", "f18", "f19", "f20", "f21", "f22", "f23", "f24",
}

// KeyAliases maps accepted spellings to the names in Keys.
var KeyAliases = map[string]string{
	"return": "enter", "escape": "esc", "del": "delete", "ins": "insert",
	"control": "ctrl", "meta": "super", "win": "super", "cmd": "super", "command": "super",
	"option": "alt", "pgup": "pageup", "pgdn": "pagedown", "page_up": "pageup", "page_down": "pagedown",
	"arrowup": "up", "arrowdown": "down", "arrowleft": "left", "arrowright": "right",
}
