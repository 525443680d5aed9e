package native

import (
	"context"
	"errors"
)

// Sessioned is implemented by backends that reach the desktop through a
// session the person at the screen grants, such as the xdg-desktop-portal
// RemoteDesktop and ScreenCast sessions on Wayland. Begin opens the session
// if there is none, asking the person through the desktop's own dialog when
// needed, and returns a *Refusal while the answer is pending or after a
// refusal. The core calls Begin at the start of an observation and of a
// link request, never for discovery or readiness, and never within an act:
// a session that closed since the act's observation is drift, not a
// reason to open another.
type Sessioned interface {
	Begin(ctx context.Context) error
}

// Refusal is a backend's reason for not serving a request, with a reason
// code the caller sees (permission_pending,
// linux_pipewire_fresh_frame_unavailable, portal_session_closed, …). Err
// is one of the errors below and says which typed error the core reports.
// A refusal never means the connection to the desktop is lost: the core
// keeps the backend.
type Refusal struct {
	Err    error
	Reason string
	Detail string
}

func (r *Refusal) Error() string { return r.Detail }
func (r *Refusal) Unwrap() error { return r.Err }

// Refuse returns a *Refusal.
func Refuse(err error, reason, detail string) *Refusal {
	return &Refusal{Err: err, Reason: reason, Detail: detail}
}

// ReasonInputNotGranted is the refusal reason of a session the person
// shares without allowing input; the core reports it as
// INPUT_NOT_GRANTED.
const ReasonInputNotGranted = "input_not_granted"

// ErrSessionClosed: the desktop session the observation was taken on is
// gone (a resolution change, a revoked permission, a compositor restart);
// the observation's references are invalid.
var ErrSessionClosed = errors.New("desktop session closed")

// Element is one accessible element of an AccessibilityTree: its depth in
// the tree, role, name and bounds in native coordinates (empty when the
// platform gives none).
type Element struct {
	Depth  int
	Role   string
	Name   string
	Bounds Rect
}

// AccessibilityTree is implemented by backends whose accessibility API
// gives element bounds. The core renders the elements as text with the
// bounds in the observation's image coordinates, within the same byte
// limit as Backend.Accessibility, which such a backend still implements.
type AccessibilityTree interface {
	// AccessibilityTree returns the focused window's elements depth first,
	// at most maxNodes of them.
	AccessibilityTree(ctx context.Context, maxNodes int) ([]Element, error)
}

// Checker is implemented by backends that can tell, without sending
// anything and without reading the desktop, that Dispatch would refuse
// steps (a key without a mapping, a scroll by a fraction of a notch). The
// core calls it before it consumes the act's observation, so that input
// the backend could never send loses nothing. Dispatch still checks: a
// refusal there, with nothing sent, gives the observation back.
type Checker interface {
	CheckSteps(steps []Step) error
}
