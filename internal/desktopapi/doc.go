// Package desktopapi holds the computer operations' names and their
// request and response types, types only: what internal/desktop
// implements, and what a transport needs to observe the screen, act on
// it, list windows and applications or use the clipboard without
// importing the implementation. It is a leaf (see
// TestTypesPackagesAreLeaves): beside the standard library it uses only
// errcode, opsapi and internal/desktop/native, the backends' types and
// interfaces, whose monitors, rectangles and readiness it reports. How an
// operation is described to the policy is registered with it, in
// internal/desktop.
package desktopapi

// The computer operations' names, the same on every transport.
const (
	OpDesktops       = "computer_desktops"
	OpObserve        = "computer_observe"
	OpAct            = "computer_act"
	OpWindows        = "computer_windows"
	OpFocusWindow    = "computer_focus_window"
	OpApps           = "computer_apps"
	OpLaunchApp      = "computer_launch_app"
	OpClipboardRead  = "computer_clipboard_read"
	OpClipboardWrite = "computer_clipboard_write"
	OpPermissions    = "computer_permissions"
)
