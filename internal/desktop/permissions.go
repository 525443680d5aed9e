package desktop

import (
	"context"
	"runtime"

	"github.com/hostlink/hostlink/internal/desktop/native"
	"github.com/hostlink/hostlink/internal/desktopapi"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
)

// Permissions hostlink can answer for; anything else is "unknown".
var knownPermissions = []string{"screen_recording", "accessibility", "input_monitoring"}

func init() {
	ops.AddDescribed(&computerOps, spec(desktopapi.OpPermissions, "Check OS permissions",
		"Whether the OS permissions computer use needs are granted (screen_recording, accessibility, input_monitoring): granted, denied, unknown or not_applicable. Never prompts.",
		policy.ComputerObserve, ops.Spec{NoAsk: true, ReadOnly: true, Idempotent: true}), (*Service).describePermissions, value((*Service).permissions))
}

// describePermissions describes the request to the policy.
func (*Service) describePermissions(a desktopapi.PermissionsArgs, dc policy.DescribeContext) (policy.Action, error) {
	return describeArgs(dc, a.Desktop, a), nil
}

// permissions reports the OS permissions computer use depends on, from the
// backend's own readiness probes. It never prompts the user. Only macOS
// has such grants (TCC); elsewhere they are not_applicable while the
// desktop is reachable.
func (s *Service) permissions(ctx context.Context, c *ops.Call, a desktopapi.PermissionsArgs) (*desktopapi.PermissionsResult, error) {
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
	res := &desktopapi.PermissionsResult{Permissions: make(map[string]string, len(names))}
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
			return desktopapi.PermUnknown
		}
		return desktopapi.NotApplicable
	default:
		return desktopapi.PermUnknown
	}
	switch {
	case goos != "darwin" && reachable:
		return desktopapi.NotApplicable
	case !reachable:
		return desktopapi.PermUnknown
	case r.Ready:
		return desktopapi.Granted
	case r.Reason == "permission_pending":
		return desktopapi.Denied
	}
	return desktopapi.PermUnknown
}
