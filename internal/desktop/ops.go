package desktop

import (
	"context"

	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
)

// computerOps are the computer operations; each one's file adds itself.
var computerOps ops.Group[*Service]

// Register adds the computer operations to r: desktops, observe and act,
// windows, focus, applications, permissions and, only when the local user
// opted in, the clipboard. Their results are values, not pointers, so
// that each output schema is an object as MCP requires.
func Register(r *ops.Registry, s *Service) { computerOps.Register(r, s) }

// ScreenshotBudget bounds the screenshots a platform takes: the
// protocol's 10 a minute, machine-wide.
var ScreenshotBudget = &ops.Budget{Name: "screenshots", PerMinute: 10, Transports: ops.Remote}

// LaunchBudget bounds the applications a platform starts, 10 a minute
// machine-wide, like commands: an application is a process too.
var LaunchBudget = &ops.Budget{Name: "app_launches", PerMinute: 10, Transports: ops.Remote}

// spec is a computer operation's spec: offered on every transport.
func spec(name, title, desc string, class policy.Class, s ops.Spec) ops.Spec {
	s.Name, s.Title, s.Description, s.Class = name, title, desc, class
	s.Capability, s.Transports = ops.ComputerUse, ops.AllTransports
	return s
}

// describeArgs describes a request with nothing to resolve: its desktop
// and every argument.
func describeArgs(dc policy.DescribeContext, desktop string, in any) policy.Action {
	var act policy.Action
	if desktop == "" {
		desktop = "default"
	}
	act.Add("Desktop", desktop)
	act.Summary = dc.Op + " " + policy.ArgsFields(&act, in)
	return act
}

// value adapts a handler returning *Out to one returning Out.
func value[In, Out any](h func(*Service, context.Context, *ops.Call, In) (*Out, error)) func(*Service, context.Context, *ops.Call, In) (Out, error) {
	return func(s *Service, ctx context.Context, c *ops.Call, in In) (Out, error) {
		out, err := h(s, ctx, c, in)
		if err != nil {
			var zero Out
			return zero, err
		}
		return *out, nil
	}
}

// Specs are the specs of the operations Register adds, for a registry that
// names them disabled when the local user has not enabled them.
func Specs() []ops.Spec { return computerOps.Specs() }
