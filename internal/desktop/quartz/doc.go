// Package quartz is hostlink's desktop backend for macOS, without cgo:
// CoreGraphics, CoreFoundation and ApplicationServices are called through
// purego (github.com/ebitengine/purego), imported only from _darwin.go
// files so that other targets do not link its runtime shim.
//
// Native coordinates are Quartz global display points (top-left origin);
// images are physical pixels, so a Retina monitor has Scale 2. Capture
// needs the Screen Recording grant and input the Accessibility grant;
// without them the backend reports permission_pending and never prompts.
// Text is posted as Unicode keyboard events, never through the clipboard.
//
// Capture uses CGWindowListCreateImage, which Apple marks obsolete in the
// macOS 15 SDK in favour of ScreenCaptureKit; where the running macOS no
// longer provides it, capture reports not supported. The package is only
// compiled and vetted in CI (no macOS runner).
//
// The package is empty on other operating systems.
package quartz
