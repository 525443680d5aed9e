package desktopapi

import "github.com/hostlink/hostlink/internal/desktop/native"

// WindowsArgs is computer_windows' request.
type WindowsArgs struct {
	Desktop          string `json:"desktop,omitempty" jsonschema:"desktop id from computer_desktops; optional when there is one"`
	App              string `json:"app,omitempty" jsonschema:"only windows of this application (class, process or bundle name; case-insensitive)"`
	IncludeMinimized bool   `json:"include_minimized,omitempty"`
	IncludeOffscreen bool   `json:"include_offscreen,omitempty" jsonschema:"also windows outside every monitor"`
	WindowID         string `json:"window_id,omitempty" jsonschema:"only this window, re-verified (WINDOW_STALE when it is gone)"`
}

// ListedWindow is one window of computer_windows, in native coordinates.
type ListedWindow struct {
	WindowID   string      `json:"window_id" jsonschema:"opaque id for computer_focus_window; never names another window"`
	Title      string      `json:"title"`
	App        string      `json:"app,omitempty"`
	PID        int         `json:"pid,omitempty"`
	Bounds     native.Rect `json:"bounds"`
	Monitor    int         `json:"monitor" jsonschema:"index of the monitor holding the window's centre, -1 for none"`
	Focused    bool        `json:"focused"`
	Minimized  bool        `json:"minimized"`
	Fullscreen bool        `json:"fullscreen"`
	Elevated   bool        `json:"elevated,omitempty"`
}

// WindowsResult is computer_windows' response.
type WindowsResult struct {
	Desktop         string         `json:"desktop"`
	CoordinateSpace string         `json:"coordinate_space"`
	Windows         []ListedWindow `json:"windows"`
	Truncated       bool           `json:"truncated"`
}

// FocusWindowArgs is computer_focus_window's request.
type FocusWindowArgs struct {
	WindowID string `json:"window_id" jsonschema:"a window id from computer_windows"`
}

// FocusWindowResult is computer_focus_window's response: the receipt and
// what the desktop shows afterwards.
type FocusWindowResult struct {
	Receipt Receipt `json:"receipt"`
	// Focused is whether the window was the focused one when checked after
	// the request (a window manager may refuse or delay it).
	Focused bool `json:"focused"`
}
