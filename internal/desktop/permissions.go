package desktop

import (
	"context"
	"runtime"

	"github.com/hostlink/hostlink/internal/desktop/native"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
)

// Permission states, as the wire protocol names them.
const (
	Granted       = "granted"
	Denied        = "denied"
	PermUnknown   = "unknown"
	NotApplicable = "not_applicable"
)

// Permissions hostlink can answer for; anything else is "unknown".
var knownPermissions = []string{"screen_recording", "accessibility", "input_monitoring"}

// PermissionsArgs is computer_permissions' request.
type PermissionsArgs struct {
	Desktop     string   `json:"desktop,omitempty"`
	Permissions []string `json:"permissions,omitempty" jsonschema:"screen_recording, accessibility, input_monitoring; all three when omitted"`
}

func init() {
	ops.Add(&computerOps, spec("computer_permissions", "Check OS permissions",
		"Whether the OS permissions computer use needs are granted (screen_recording, accessibility, input_monitoring): granted, denied, unknown or not_applicable. Never prompts.",
		policy.ComputerObserve, ops.Spec{NoAsk: true, ReadOnly: true, Idempotent: true}), value((*Service).permissions))
}

// Describe implements policy.Describer.
func (a PermissionsArgs) Describe(dc policy.DescribeContext) (policy.Action, error) {
	return describeArgs(dc, a.Desktop, a), nil
}

// PermissionsResult is computer_permissions' response.
type PermissionsResult struct {
	Permissions map[string]string `json:"permissions" jsonschema:"granted, denied, unknown or not_applicable per permission"`
}

// permissions reports the OS permissions computer use depends on, from the
// backend's own readiness probes. It never prompts the user. Only macOS
// has such grants (TCC); elsewhere they are not_applicable while the
// desktop is reachable.
func (s *Service) permissions(ctx context.Context, c *ops.Call, a PermissionsArgs) (*PermissionsResult, error) {
	names := a.Permissions
	if len(names) == 0 {
		names = knownPermissions
	}
	if len(names) > 16 {
		return nil, errcode.New(errcode.InvalidArgument, "at most 16 permissions")
	}
	var st native.Status
	reachable := true
	if err := s.Do(ctx, a.Desktop, func(b native.Backend) error {
		st = b.Status(ctx)
		return nil
	}); err != nil {
		e := errcode.As(err)
		if e.Code != DesktopUnavailable && e.Code != PermissionPending && e.Code != InputNotGranted {
			return nil, err
		}
		reachable = false
	}
	res := &PermissionsResult{Permissions: make(map[string]string, len(names))}
	for _, n := range names {
		res.Permissions[trunc(n)] = permissionState(runtime.GOOS, n, st, reachable)
	}
	return res, nil
}

// permissionState maps a backend's readiness to one permission's state.
func permissionState(goos, name string, st native.Status, reachable bool) string {
	var r native.Readiness
	switch name {
	case "screen_recording":
		r = st.Capture
	case "accessibility":
		r = st.Input
	case "input_monitoring":
		// hostlink never listens to input; macOS's Input Monitoring
		// grant is not read here.
		if goos == "darwin" {
			return PermUnknown
		}
		return NotApplicable
	default:
		return PermUnknown
	}
	switch {
	case goos != "darwin" && reachable:
		return NotApplicable
	case !reachable:
		return PermUnknown
	case r.Ready:
		return Granted
	case r.Reason == "permission_pending":
		return Denied
	}
	return PermUnknown
}
