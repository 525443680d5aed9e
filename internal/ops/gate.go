package ops

import (
	"context"
	"slices"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/policy"
)

// Gate is the Policy of a registry under engine e: each call's request
// describes itself, resolving through h, and e decides. The decision is
// noted in the call's audit record.
func Gate(e *policy.Engine, h policy.Hooks) Policy { return gate{e, h} }

type gate struct {
	e *policy.Engine
	h policy.Hooks
}

func (g gate) Allow(ctx context.Context, c *Call, op *Op, in any) error {
	d, err := g.e.Decide(ctx, policy.Request{
		Op: op.Name, Title: op.Title, Class: op.Class, NoAsk: op.NoAsk,
		Transport: c.Transport, Peer: c.Peer, OwnApproval: slices.Contains(Remote, c.Transport),
		In: in, Hooks: g.h,
	})
	if d.Rule != "" {
		c.Detail("policy", d.Rule)
	}
	if d.ApprovalID != "" {
		c.Detail("approval_id", d.ApprovalID)
	}
	if policy.Pending(err) {
		return retry(errcode.As(err))
	}
	return err
}
