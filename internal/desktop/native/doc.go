// Package native is the contract between hostlink's desktop core
// (internal/desktop) and each OS backend: the X11 client on Linux, Win32 on
// Windows, Quartz on macOS.
//
// A backend speaks in its native coordinate space: the virtual-screen
// pixels of X11 and of a per-monitor-DPI-aware Windows process, or the
// logical points of macOS. Each monitor says how many image pixels one
// native unit is (Scale), so the core can map image coordinates back. The
// interface is deliberately low level (capture a rectangle, press a key,
// move the pointer) so that both the model operations and the platform
// link's wire messages (SCREENSHOT_REQUEST, INPUT_ACTION, WINDOW_LIST, …)
// are compositions of the same calls.
package native
