package desktop

import (
	"errors"

	"github.com/hostlink/hostlink/internal/desktop/native"
	"github.com/hostlink/hostlink/internal/errcode"
)

// Error codes of computer control. Those the wire protocol defines keep
// its names.
const (
	// DesktopUnavailable: no desktop is reachable (no display, Wayland
	// without X11, WSL2, a locked session); the details carry the reason.
	DesktopUnavailable errcode.Code = "DESKTOP_UNAVAILABLE"
	// FeatureNotSupported: the backend cannot do this (protocol code).
	FeatureNotSupported errcode.Code = "FEATURE_NOT_SUPPORTED"
	// PermissionPending: an OS permission (macOS Accessibility or Screen
	// Recording) is not granted (protocol code).
	PermissionPending errcode.Code = "PERMISSION_PENDING"
	// ObservationUnknown: the reference was never issued to this caller by
	// this process (foreign, or from before a restart).
	ObservationUnknown errcode.Code = "OBSERVATION_UNKNOWN"
	// ObservationExpired: the reference is older than two minutes.
	ObservationExpired errcode.Code = "OBSERVATION_EXPIRED"
	// ObservationConsumed: an act already used the reference.
	ObservationConsumed errcode.Code = "OBSERVATION_CONSUMED"
	// DesktopDrift: focus, geometry or session changed since the
	// observation; nothing was dispatched.
	DesktopDrift errcode.Code = "DESKTOP_DRIFT"
	// InputOutOfBounds: a coordinate is outside the image or every
	// monitor (protocol code); the details carry the valid rectangles.
	InputOutOfBounds errcode.Code = "INPUT_OUT_OF_BOUNDS"
	// WindowStale: a window reference no longer names the same live
	// window (protocol code).
	WindowStale errcode.Code = "WINDOW_STALE"
	// KeyUnmapped: a key or character has no mapping on this keyboard;
	// nothing was dispatched.
	KeyUnmapped errcode.Code = "KEY_UNMAPPED"
	// InputNotGranted: the person shared the screen without allowing
	// remote input (errcode.InputNotGranted).
	InputNotGranted = errcode.InputNotGranted
	// InputFailed: the backend refused the input before dispatching any
	// of it.
	InputFailed errcode.Code = "INPUT_FAILED"
)

// nativeErr maps a backend error to a typed one.
func nativeErr(err error, what string) *errcode.Error {
	var e *errcode.Error
	var r *native.Refusal
	switch {
	case errors.As(err, &e):
		return e
	case errors.As(err, &r):
		return refusal(r)
	case errors.Is(err, native.ErrUnmappedKey):
		return errcode.New(KeyUnmapped, "%s: %v", what, err)
	case errors.Is(err, native.ErrPermission):
		return errcode.New(PermissionPending, "%s: an OS permission is missing: %v", what, err)
	case errors.Is(err, native.ErrSecureDesktop):
		return errcode.New(DesktopUnavailable, "%s: the session is locked or on a secure desktop", what).With("reason", "session_locked")
	case errors.Is(err, native.ErrWindowGone):
		return errcode.New(WindowStale, "%s: the window no longer exists", what)
	case errors.Is(err, native.ErrNotSupported):
		return errcode.New(FeatureNotSupported, "%s: %v", what, err)
	case errors.Is(err, native.ErrUnavailable):
		return errcode.New(DesktopUnavailable, "%s: the desktop is not reachable", what)
	}
	return errcode.As(err)
}

// refusal maps a backend's refusal to its typed error, the backend's
// reason in the details.
func refusal(r *native.Refusal) *errcode.Error {
	code := DesktopUnavailable
	switch {
	case r.Reason == native.ReasonInputNotGranted:
		code = InputNotGranted
	case errors.Is(r.Err, native.ErrPermission):
		code = PermissionPending
	case errors.Is(r.Err, native.ErrSessionClosed):
		code = DesktopDrift
	case errors.Is(r.Err, native.ErrNotSupported):
		code = FeatureNotSupported
	}
	e := errcode.New(code, "%s", r.Detail).With("reason", r.Reason)
	if code == DesktopDrift {
		e = e.With("changed", []string{"session"})
	}
	return e
}

// lost reports whether a backend error means the desktop's connection is
// gone, so that the desktop is dropped and reopened by the next request.
// A refusal (consent pending, a closed portal session) is not: the
// backend stays, with what it remembers of the person's answers.
func lost(err error) bool {
	var r *native.Refusal
	return !errors.As(err, &r)
}
