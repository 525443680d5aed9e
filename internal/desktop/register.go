package desktop

import (
	"encoding/json"
	"fmt"
	"unicode/utf8"

	"github.com/hostlink/hostlink/internal/approvalsapi"
	"github.com/hostlink/hostlink/internal/desktopapi"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
)

func init() {
	ops.AddDescribed(&computerOps, spec(desktopapi.OpDesktops, "Computer desktops",
		"The desktops reachable now: monitors (native geometry and scale), optionally windows, and per-operation readiness with a reason code when not ready (no_display, wayland, wsl2, permission_pending, session_locked, …).",
		policy.ComputerObserve, ops.Spec{NoAsk: true, ReadOnly: true, Idempotent: true}), (*Service).describeDesktops, value((*Service).desktops))
}

// describeDesktops describes the request to the policy.
func (*Service) describeDesktops(a desktopapi.DesktopsArgs, dc policy.DescribeContext) (policy.Action, error) {
	return describeArgs(dc, "", a), nil
}

func init() {
	ops.AddDescribed(&computerOps, spec(desktopapi.OpObserve, "Observe the screen",
		"Capture a monitor, all monitors stitched, or a region inside an earlier observation's image, as an image (returned as image content, not in the JSON) scaled down to max_edge (default 1280; a region zooms in). Returns an observation_id for computer_act (valid two minutes, used once), window references and, if asked, accessibility text. All coordinates are the image's pixels; hostlink maps them exactly to the screen's.",
		policy.ComputerObserve, ops.Spec{Budget: ScreenshotBudget, ReadOnly: true}), (*Service).describeObserve, value((*Service).observe))
}

// describeObserve describes the request to the policy.
func (*Service) describeObserve(a desktopapi.ObserveArgs, dc policy.DescribeContext) (policy.Action, error) {
	return describeArgs(dc, a.Desktop, a), nil
}

func init() {
	ops.AddDescribed(&computerOps, spec(desktopapi.OpAct, "Act on the screen",
		"Click, move, drag, scroll, type literal text, press a key chord or focus a window, at image coordinates of the named observation, which this consumes. Refused without dispatch if the reference is expired, used or foreign, or if focus, geometry or session drifted. Returns a receipt (accepted means the OS took the input, not that an application acted) and a fresh observation.",
		policy.Computer, ops.Spec{Destructive: true}), (*Service).describeAct, value((*Service).act))
}

// describeAct describes the request to the policy: the input with the
// window it would reach and where. An approval binds the input to that
// window and those coordinates, not to the observation it names: a
// platform's INPUT_ACTION observes afresh for every attempt, and a retry
// after the approval must still match while the same window is under the
// same point.
func (*Service) describeAct(a desktopapi.ActArgs, dc policy.DescribeContext) (policy.Action, error) {
	var act policy.Action
	target, err := dc.Window(a.ObservationID, a.X, a.Y, a.WindowRef)
	if err != nil {
		// The act would be refused for it: refused before asking.
		act.Refuse, target = err, "unknown observation"
	}
	act.Add("Action", a.Action)
	act.Add("Target", target)
	where := ""
	if a.X != nil && a.Y != nil {
		where = fmt.Sprintf("(%d, %d) in image coordinates", *a.X, *a.Y)
		act.Add("At", where)
	}
	if a.Path != nil {
		act.Add("Drag path", policy.Compact(a.Path))
	}
	act.Add("Button", a.Button)
	if a.Count > 0 {
		act.Add("Clicks", fmt.Sprint(a.Count))
	}
	if a.DX != 0 || a.DY != 0 {
		act.Add("Scroll", fmt.Sprintf("dx %d, dy %d", a.DX, a.DY))
	}
	act.Add("Text to type", a.Text)
	act.Add("Keys", a.Keys)
	if a.Modifiers != nil {
		act.Add("Modifiers", policy.Compact(a.Modifiers))
	}
	act.Add("Window", a.WindowRef)
	act.Add("Observation", a.ObservationID)
	marks := actMarks(a)
	act.Image = &approvalsapi.Image{ObservationID: a.ObservationID, Marks: marks, Window: target, Text: a.Text}
	if png, w, h, ok := dc.ActImage(a.ObservationID, marks); ok {
		act.PNG, act.Image.Width, act.Image.Height = png, w, h
	}
	act.Summary = fmt.Sprintf("computer_act %s %s on %s", a.Action, where, target)
	if a.Text != "" {
		act.Summary += fmt.Sprintf(" (types %d characters)", utf8.RuneCountInString(a.Text))
	}
	var bound map[string]any
	json.Unmarshal([]byte(policy.Compact(a)), &bound)
	delete(bound, "observation_id")
	bound["target"] = target
	act.Binding = bound
	return act, nil
}
