package companion

import (
	"context"
	"image"

	"github.com/hostlink/hostlink/internal/desktop/native"
	"github.com/hostlink/hostlink/internal/errcode"
)

// outdatedQueue is the queue of entries that reach no desktop.
const outdatedQueue = "companion:outdated"

// outdated is what discovery shows for a paired companion refused as too
// old: an entry whose every operation is not ready with reason
// computer_companion_upgrade_required, until that companion connects with
// a current version.
type outdated struct {
	id  string
	err *errcode.Error
}

func (o outdated) ID() string    { return "companion:" + o.id + "/upgrade_required" }
func (o outdated) Space() string { return "pixels" }

func (o outdated) Status(context.Context) native.Status {
	r := native.Readiness{Reason: string(CodeUpgradeRequired)}
	if o.err != nil {
		r.Detail = o.err.Message
	}
	return native.Status{Capture: r, Input: r, Windows: r, Accessibility: r}
}

func (o outdated) State(context.Context) (native.State, error)        { return native.State{}, o.err }
func (o outdated) Monitors(context.Context) ([]native.Monitor, error) { return []native.Monitor{}, nil }
func (o outdated) Windows(context.Context) ([]native.Window, error)   { return nil, o.err }
func (o outdated) Capture(context.Context, native.Rect, float64) (*image.RGBA, error) {
	return nil, o.err
}
func (o outdated) Cursor(context.Context) (int, int, error)             { return 0, 0, o.err }
func (o outdated) Dispatch(context.Context, []native.Step) (int, error) { return 0, o.err }
func (o outdated) Focus(context.Context, native.Window) error           { return o.err }
func (o outdated) Accessibility(context.Context, int) (string, error)   { return "", o.err }
func (o outdated) Close() error                                         { return nil }
