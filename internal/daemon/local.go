package daemon

import (
	"context"
	"fmt"
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
// Their requests are the API types of package apitype; each control's
// description is registered with it (control).

// local is the spec of a local-user control.
func local(name, title, desc string, readOnly bool) ops.Spec {
	return ops.Spec{Name: name, Title: title, Description: desc, Capability: ops.Local, Class: policy.Hostlink,
		Transports: ops.LocalUser, ReadOnly: readOnly, Idempotent: readOnly}
}

// registerLocal adds the local user's controls to reg.
func (d *Daemon) registerLocal(reg *ops.Registry) {
	control(reg, local(apitype.MethodStatus, "Status", "hostlink's status: transports, link, capabilities, workdirs, running work.", true), describeControl[apitype.StatusArgs],
		func(context.Context, *ops.Call, apitype.StatusArgs) (apitype.Status, error) { return d.Status(), nil })
	control(reg, local(apitype.MethodApprovalsList, "List approvals", "The pending approvals, or with all also the decided and expired ones.", true), describeControl[apitype.ApprovalsListArgs],
		func(_ context.Context, _ *ops.Call, a apitype.ApprovalsListArgs) ([]approvals.Approval, error) {
			return d.Approvals().List(!a.All), nil
		})
	control(reg, local(apitype.MethodApprovalsShow, "Show approval", "One approval: the exact action, its state and deadline.", true), describeApproval,
		func(_ context.Context, _ *ops.Call, a apitype.ApprovalArgs) (approvals.Approval, error) {
			ap, ok := d.Approvals().Get(a.ID)
			if !ok {
				return approvals.Approval{}, errcode.New(approvals.CodeNotFound, "no approval has id %q", a.ID)
			}
			return ap, nil
		})
	control(reg, local(apitype.MethodApprovalsDecide, "Decide approval", "Approve or deny a pending approval, as the local user.", false), describeDecide,
		func(_ context.Context, c *ops.Call, a apitype.DecideArgs) (approvals.Approval, error) {
			c.Detail("approval_id", a.ID)
			if a.Scope != "" {
				c.Detail("scope", a.Scope)
			}
			return d.Approvals().DecideWith(a.ID, decision(a.Decision, a.DecideScope, c))
		})
	control(reg, local(apitype.MethodApprovalsBatch, "Decide approvals", "Approve or deny several pending approvals at once, as the local user; each has its own outcome.", false), describeDecideBatch,
		func(_ context.Context, c *ops.Call, a apitype.DecideBatchArgs) ([]approvals.BatchResult, error) {
			if len(a.IDs) == 0 {
				return nil, errcode.New(errcode.InvalidArgument, "ids is empty")
			}
			c.Detail("approval_ids", a.IDs)
			return d.Approvals().DecideBatch(a.IDs, decision(a.Decision, a.DecideScope, c)), nil
		})
	control(reg, local(apitype.MethodGrantsList, "List grants", "The grants in force, what each covers and when it ends; then the ones that ended lately, newest first, each with when and why (ended, ended_why).", true), describeControl[apitype.GrantsArgs],
		func(context.Context, *ops.Call, apitype.GrantsArgs) ([]approvals.Grant, error) {
			return append(d.Approvals().Grants(), d.Approvals().EndedGrants()...), nil
		})
	control(reg, local(apitype.MethodGrantsRevoke, "Revoke grant", "End a grant now, as the local user.", false), describeGrant,
		func(_ context.Context, c *ops.Call, a apitype.GrantArgs) (approvals.Grant, error) {
			c.Detail("grant_id", a.ID)
			return d.Approvals().Revoke(a.ID, c.Peer, c.Transport)
		})
	control(reg, local(apitype.MethodGrantsSave, "Save grant", "Show the TOML that saving a grant to the configuration writes; with apply, write it and reload.", false), describeSaveGrant,
		func(_ context.Context, c *ops.Call, a apitype.SaveGrantArgs) (apitype.SaveGrantResult, error) {
			c.Detail("grant_id", a.ID)
			if a.Apply && d.Approvals().ConfirmInPerson() {
				// Writing a lasting allow rule widens what agents may do,
				// as an approval does: under confirm_in_person it is done
				// where only the person decides.
				return apitype.SaveGrantResult{}, errcode.New(approvals.CodePersonRequired, "confirm_in_person is on: save the grant in the web console (`hostlink console` opens it); here it is only shown")
			}
			return d.SaveGrant(a.ID, a.Apply, string(c.Transport)+" "+c.Peer)
		})
	control(reg, local(apitype.MethodConsoleLogin, "Console login", "A one-time link that logs a browser in to the web console, for the local user; under confirm_in_person the daemon opens it itself.", false), describeControl[apitype.ConsoleLoginArgs],
		func(context.Context, *ops.Call, apitype.ConsoleLoginArgs) (apitype.ConsoleLogin, error) {
			return d.ConsoleLogin()
		})
	control(reg, local(apitype.MethodReload, "Reload", "Read the configuration again and put its [policy] in force.", false), describeControl[apitype.ReloadArgs],
		func(_ context.Context, c *ops.Call, _ apitype.ReloadArgs) (apitype.ReloadResult, error) {
			return d.Reload(string(c.Transport) + " " + c.Peer)
		})
	control(reg, local(apitype.MethodStop, "Stop", "Stop the daemon, as the service manager's stop does; its running commands and tasks end.", false), describeControl[apitype.StopArgs],
		func(_ context.Context, c *ops.Call, _ apitype.StopArgs) (apitype.StopResult, error) {
			d.requestStop("stop requested by " + string(c.Transport) + " " + c.Peer)
			return apitype.StopResult{PID: os.Getpid()}, nil
		})
}

// decision is a decide request as the broker takes it, decided by the
// caller's measured peer.
func decision(verb string, s apitype.DecideScope, c *ops.Call) approvals.Decision {
	return approvals.Decision{Approve: verb == "approve", Scope: approvals.Scope(s.Scope), Minutes: s.Minutes,
		Path: s.Path, ArgvPrefix: s.ArgvPrefix, By: c.Peer, Via: c.Transport}
}

// control registers a local-user control on reg: its spec, its
// description and its handler.
func control[In, Out any](reg *ops.Registry, spec ops.Spec, describe func(In, policy.DescribeContext) (policy.Action, error), h ops.Handler[In, Out]) {
	ops.RegisterNormalized[In, In](reg, spec, nil, describe, h)
}

// describeControl describes a control that names nothing: the controls
// touch no workdir.
func describeControl[In any](_ In, dc policy.DescribeContext) (policy.Action, error) {
	return policy.Action{Summary: dc.Op}, nil
}

// describeApproval describes approvals.show: the approval it names.
func describeApproval(a apitype.ApprovalArgs, dc policy.DescribeContext) (policy.Action, error) {
	return policy.Action{Summary: dc.Op + " " + a.ID}, nil
}

// describeDecide describes approvals.decide: the approval and the
// decision.
func describeDecide(a apitype.DecideArgs, dc policy.DescribeContext) (policy.Action, error) {
	return policy.Action{Summary: dc.Op + " " + a.ID + " " + a.Decision}, nil
}

// describeDecideBatch describes approvals.decide_batch: how many, and the
// decision.
func describeDecideBatch(a apitype.DecideBatchArgs, dc policy.DescribeContext) (policy.Action, error) {
	return policy.Action{Summary: fmt.Sprintf("%s %d %s", dc.Op, len(a.IDs), a.Decision)}, nil
}

// describeGrant describes approvals.revoke: the grant it names.
func describeGrant(a apitype.GrantArgs, dc policy.DescribeContext) (policy.Action, error) {
	return policy.Action{Summary: dc.Op + " " + a.ID}, nil
}

// describeSaveGrant describes approvals.save: the grant, and whether it
// is written.
func describeSaveGrant(a apitype.SaveGrantArgs, dc policy.DescribeContext) (policy.Action, error) {
	return policy.Action{Summary: fmt.Sprintf("%s %s apply=%t", dc.Op, a.ID, a.Apply)}, nil
}
