package daemon

import (
	"context"
	"os"

	"github.com/hostlink/hostlink/internal/apitype"
	"github.com/hostlink/hostlink/internal/approvals"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
)

// The local user's controls are operations like any other (strictly
// decoded, audited), but offered only on the control channel
// (ops.LocalUser): neither MCP nor the platform link can see or call
// them, so no agent or platform can approve anything or reload the policy.
// Their requests are the API types of package apitype.

type (
	statusArgs        apitype.StatusArgs
	approvalsListArgs apitype.ApprovalsListArgs
	approvalArgs      apitype.ApprovalArgs
	decideArgs        apitype.DecideArgs
	reloadArgs        apitype.ReloadArgs
	stopArgs          apitype.StopArgs
)

// local is the spec of a local-user control.
func local(name, title, desc string, readOnly bool) ops.Spec {
	return ops.Spec{Name: name, Title: title, Description: desc, Capability: ops.Local, Class: policy.Hostlink,
		Transports: ops.LocalUser, ReadOnly: readOnly, Idempotent: readOnly}
}

// registerLocal adds the local user's controls to reg.
func (d *Daemon) registerLocal(reg *ops.Registry) {
	ops.Register(reg, local(apitype.MethodStatus, "Status", "hostlink's status: transports, link, capabilities, workdirs, running work.", true),
		func(context.Context, *ops.Call, statusArgs) (apitype.Status, error) { return d.Status(), nil })
	ops.Register(reg, local(apitype.MethodApprovalsList, "List approvals", "The pending approvals, or with all also the decided and expired ones.", true),
		func(_ context.Context, _ *ops.Call, a approvalsListArgs) ([]approvals.Approval, error) {
			return d.Approvals().List(!a.All), nil
		})
	ops.Register(reg, local(apitype.MethodApprovalsShow, "Show approval", "One approval: the exact action, its state and deadline.", true),
		func(_ context.Context, _ *ops.Call, a approvalArgs) (approvals.Approval, error) {
			ap, ok := d.Approvals().Get(a.ID)
			if !ok {
				return approvals.Approval{}, errcode.New(approvals.CodeNotFound, "no approval has id %q", a.ID)
			}
			return ap, nil
		})
	ops.Register(reg, local(apitype.MethodApprovalsDecide, "Decide approval", "Approve or deny a pending approval, as the local user.", false),
		func(_ context.Context, c *ops.Call, a decideArgs) (approvals.Approval, error) {
			c.Detail("approval_id", a.ID)
			return d.Approvals().Decide(a.ID, a.Decision == "approve", c.Peer, c.Transport)
		})
	ops.Register(reg, local(apitype.MethodReload, "Reload", "Read the configuration again and put its [policy] in force.", false),
		func(_ context.Context, c *ops.Call, _ reloadArgs) (apitype.ReloadResult, error) {
			return d.Reload(string(c.Transport) + " " + c.Peer)
		})
	ops.Register(reg, local(apitype.MethodStop, "Stop", "Stop the daemon, as the service manager's stop does; its running commands and tasks end.", false),
		func(_ context.Context, c *ops.Call, _ stopArgs) (apitype.StopResult, error) {
			d.requestStop("stop requested by " + string(c.Transport) + " " + c.Peer)
			return apitype.StopResult{PID: os.Getpid()}, nil
		})
}

// Describe implements policy.Describer for each control: they touch no
// workdir.
func (statusArgs) Describe(dc policy.DescribeContext) (policy.Action, error) {
	return policy.Action{Summary: dc.Op}, nil
}

// Describe implements policy.Describer.
func (approvalsListArgs) Describe(dc policy.DescribeContext) (policy.Action, error) {
	return policy.Action{Summary: dc.Op}, nil
}

// Describe implements policy.Describer.
func (a approvalArgs) Describe(dc policy.DescribeContext) (policy.Action, error) {
	return policy.Action{Summary: dc.Op + " " + a.ID}, nil
}

// Describe implements policy.Describer.
func (a decideArgs) Describe(dc policy.DescribeContext) (policy.Action, error) {
	return policy.Action{Summary: dc.Op + " " + a.ID + " " + a.Decision}, nil
}

// Describe implements policy.Describer.
func (reloadArgs) Describe(dc policy.DescribeContext) (policy.Action, error) {
	return policy.Action{Summary: dc.Op}, nil
}

// Describe implements policy.Describer.
func (stopArgs) Describe(dc policy.DescribeContext) (policy.Action, error) {
	return policy.Action{Summary: dc.Op}, nil
}
