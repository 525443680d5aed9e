package desktop

import (
	"context"

	"github.com/hostlink/hostlink/internal/ops"
)

// Capability is the capability the computer operations belong to.
const Capability = "computer_use"

// Register adds computer_desktops, computer_observe and computer_act.
// Their results are values, not pointers, so that each output schema is an
// object as MCP requires.
func Register(r *ops.Registry, s *Service) {
	spec := ops.SpecsFor(Capability)
	ops.Register(r, spec("computer_desktops", "Computer desktops",
		"The desktops reachable now: monitors (native geometry and scale), optionally windows, and per-operation readiness with a reason code when not ready (no_display, wayland, wsl2, permission_pending, session_locked, …).",
		true, false, true), value(s.desktops))
	ops.Register(r, spec("computer_observe", "Observe the screen",
		"Capture a monitor, all monitors stitched, or a region inside an earlier observation's image, as an image (returned as image content, not in the JSON). Returns an observation_id for computer_act (valid two minutes, used once), window references and, if asked, accessibility text. All coordinates are the image's pixels.",
		true, false, false), value(s.observe))
	ops.Register(r, spec("computer_act", "Act on the screen",
		"Click, move, drag, scroll, type literal text, press a key chord or focus a window, at image coordinates of the named observation, which this consumes. Refused without dispatch if the reference is expired, used or foreign, or if focus, geometry or session drifted. Returns a receipt (accepted means the OS took the input, not that an application acted) and a fresh observation.",
		false, true, false), value(s.act))
	registerMore(r, s)
}

// value adapts a handler returning *Out to one returning Out.
func value[In, Out any](h func(context.Context, *ops.Call, In) (*Out, error)) ops.Handler[In, Out] {
	return func(ctx context.Context, c *ops.Call, in In) (Out, error) {
		out, err := h(ctx, c, in)
		if err != nil {
			var zero Out
			return zero, err
		}
		return *out, nil
	}
}
