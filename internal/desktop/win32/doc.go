// Package win32 is hostlink's desktop backend for Windows, in pure Go over
// user32 and gdi32 (no cgo): monitors with EnumDisplayMonitors and
// per-monitor DPI awareness, capture with BitBlt from the screen DC, input
// with SendInput (text as KEYEVENTF_UNICODE, never the clipboard), windows
// with EnumWindows and GetForegroundWindow.
//
// The process declares itself per-monitor DPI aware (V2) when the backend
// opens, so native coordinates are physical pixels on every monitor and
// image pixels equal native units. Windows of UAC-elevated processes are
// listed as elevated and never acted on; the secure desktop (UAC prompt,
// lock screen) is reported as a locked session.
//
// The package is empty on other operating systems.
package win32
