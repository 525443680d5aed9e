package daemon

import (
	"context"
	"encoding/json"

	"github.com/hostlink/hostlink/internal/approvals"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ipc"
)

// Control-channel methods that only the local user has: they are not
// registry operations, so neither MCP nor the platform link can call them.
const (
	MethodApprovalsList   = "approvals.list"
	MethodApprovalsShow   = "approvals.show"
	MethodApprovalsDecide = "approvals.decide"
	MethodReload          = "reload"
)

// ApprovalsListParams is approvals.list's request.
type ApprovalsListParams struct {
	All bool `json:"all"` // also decided and expired ones
}

// ApprovalParams names an approval.
type ApprovalParams struct {
	ID string `json:"id"`
}

// DecideParams is approvals.decide's request.
type DecideParams struct {
	ID       string `json:"id"`
	Decision string `json:"decision"` // "approve" or "deny"
}

// localMethods are the control channel's local-only methods.
func (d *Daemon) localMethods() map[string]ipc.LocalMethod {
	b := d.Approvals()
	return map[string]ipc.LocalMethod{
		MethodApprovalsList: func(_ context.Context, _ string, raw json.RawMessage) (any, error) {
			var p ApprovalsListParams
			if err := decodeParams(raw, &p); err != nil {
				return nil, err
			}
			return b.List(!p.All), nil
		},
		MethodApprovalsShow: func(_ context.Context, _ string, raw json.RawMessage) (any, error) {
			var p ApprovalParams
			if err := decodeParams(raw, &p); err != nil {
				return nil, err
			}
			a, ok := b.Get(p.ID)
			if !ok {
				return nil, errcode.New(approvals.CodeNotFound, "no approval has id %q", p.ID)
			}
			return a, nil
		},
		MethodApprovalsDecide: func(_ context.Context, peer string, raw json.RawMessage) (any, error) {
			var p DecideParams
			if err := decodeParams(raw, &p); err != nil {
				return nil, err
			}
			if p.Decision != "approve" && p.Decision != "deny" {
				return nil, errcode.New(errcode.InvalidArgument, "decision must be approve or deny")
			}
			return b.Decide(p.ID, p.Decision == "approve", peer, ipc.Transport)
		},
		MethodReload: func(_ context.Context, peer string, _ json.RawMessage) (any, error) {
			return d.Reload("ipc " + peer)
		},
	}
}

func decodeParams(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		return nil
	}
	if err := json.Unmarshal(raw, v); err != nil {
		return errcode.New(errcode.InvalidArgument, "params do not decode: %v", err)
	}
	return nil
}
