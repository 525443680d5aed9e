// Package x11 is hostlink's desktop backend for X11, in pure Go over the X
// protocol (github.com/jezek/xgb): RandR monitors, GetImage capture, XTest
// input, EWMH windows and focus, and AT-SPI accessibility over D-Bus where
// the accessibility bus runs.
//
// Text is typed key by key through XTest, never through the clipboard. A
// character the keyboard map lacks is typed by binding its keysym to an
// unused keycode, which stays bound until a later request needs the
// keycode or the backend closes, when the map is restored (bindings.go
// says why not at the end of the request); with no keycode to bind, or
// for a key name nobody maps, the step fails with native.ErrUnmappedKey
// before anything is sent. With Caps Lock on, the keyboard's letters are
// typed with the opposite Shift so the text stays literal; letters
// hostlink bound are not corrected.
package x11
