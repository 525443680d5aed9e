package ops

import (
	"context"
	"fmt"
	"slices"
	"time"

	"github.com/hostlink/hostlink/internal/approvalsapi"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/policy"
)

// Gate is the Policy of a registry under engine e: each call's operation
// describes its normalized request (Op.Describe), resolving through h,
// and e decides. The decision is
// noted in the call's audit record.
func Gate(e *policy.Engine, h policy.Hooks) Policy { return gate{e, h} }

type gate struct {
	e *policy.Engine
	h policy.Hooks
}

func (g gate) Allow(ctx context.Context, c *Call, op *Op, in, n any) error {
	d, err := g.e.Decide(ctx, policy.Request{
		Op: op.Name, Title: op.Title, Class: op.Class, NoAsk: op.NoAsk,
		Transport: c.Transport, Peer: c.Peer, Session: c.Session, Ask: ask(c.Caller), OwnApproval: slices.Contains(Remote, c.Transport),
		In: in, Describe: op.Describe(n), Hooks: g.h, Offered: c.Classes,
		Waiting: func(a approvalsapi.Approval) { c.Progress(0, 0, WaitingMessage(a)) },
	})
	if d.Rule != "" {
		c.Detail("policy", d.Rule)
	}
	if d.ApprovalID != "" {
		c.Detail("approval_id", d.ApprovalID)
	}
	if d.GrantID != "" {
		c.Detail("grant_id", d.GrantID)
	}
	if err == nil && len(d.State) > 0 {
		c.mu.Lock()
		c.shown = d.State
		c.mu.Unlock()
	}
	if policy.Pending(err) {
		return retry(errcode.As(err))
	}
	return err
}

// ask is the caller's prompt for approvals: none for hostlink's own
// children, which act for agents, so that only the user decides.
func ask(c Caller) AskFunc {
	if c.Child {
		return nil
	}
	return c.Ask
}

// WaitingMessage says what a call held for approval a waits for and where
// the user answers, as its progress message.
func WaitingMessage(a approvalsapi.Approval) string {
	return fmt.Sprintf("waiting for the user to approve %s (approval %s, until %s): approve it in hostlink's web console or with `hostlink approvals approve %s`",
		a.Action.Summary, a.ID, a.Deadline.UTC().Format(time.RFC3339), a.ID)
}
