package desktop

import (
	"slices"
	"time"

	"github.com/hostlink/hostlink/internal/desktop/native"
	"github.com/hostlink/hostlink/internal/desktopapi"
	"github.com/hostlink/hostlink/internal/errcode"
)

// maxHold bounds hold_key.
const maxHold = 5 * time.Second

// planLow plans the acts that are single low-level steps or a timed hold:
// mouse_down and mouse_up (a press or release at a point, so that a caller
// can build gestures drag does not cover: a press, moves, a release, each
// its own act on its own observation) and hold_key (a chord pressed, held
// for duration_ms, then released). Like every act they name, and consume,
// a current observation.
func planLow(a desktopapi.ActArgs, o *observation) ([]native.Step, native.Window, error) {
	switch a.Action {
	case "mouse_down", "mouse_up":
		if a.X == nil || a.Y == nil {
			return nil, native.Window{}, errcode.New(errcode.InvalidArgument, "%s needs x and y", a.Action)
		}
		p, err := o.at(*a.X, *a.Y)
		if err != nil {
			return nil, native.Window{}, err
		}
		b, err := button(a.Button)
		if err != nil {
			return nil, native.Window{}, err
		}
		kind := native.ButtonDown
		if a.Action == "mouse_up" {
			kind = native.ButtonUp
		}
		mods, err := modifiers(a.Modifiers)
		if err != nil {
			return nil, native.Window{}, err
		}
		// Modifiers are pressed around the button step only: a held
		// modifier would outlive the act.
		return hold(mods, []native.Step{p, {Kind: kind, Button: b}}), native.Window{}, nil
	case "hold_key":
		keys, err := chord(a.Keys)
		if err != nil {
			return nil, native.Window{}, err
		}
		d := time.Duration(a.DurationMS) * time.Millisecond
		if d <= 0 || d > maxHold {
			return nil, native.Window{}, errcode.New(errcode.InvalidArgument, "hold_key needs duration_ms 1-%d", maxHold.Milliseconds())
		}
		var steps []native.Step
		for _, k := range keys {
			steps = append(steps, native.Step{Kind: native.KeyDown, Key: k})
		}
		steps = append(steps, native.Step{Kind: native.Pause, Delay: d})
		for _, k := range slices.Backward(keys) {
			steps = append(steps, native.Step{Kind: native.KeyUp, Key: k})
		}
		return steps, native.Window{}, nil
	}
	return nil, native.Window{}, errcode.New(errcode.InvalidArgument, "unknown action %q", trunc(a.Action))
}
