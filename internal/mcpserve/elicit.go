package mcpserve

import (
	"context"
	"fmt"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hostlink/hostlink/internal/approvalsapi"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/textsafe"
)

// askInClient returns how a call of session ss puts an approval to the
// client application's own prompt (MCP elicitation), or nil when the
// client did not declare the elicitation capability. The policy uses it
// only under [policy] approve_in_client = true.
func askInClient(ss *mcp.ServerSession) ops.AskFunc {
	if ss == nil {
		return nil
	}
	ip := ss.InitializeParams()
	if ip == nil || ip.Capabilities == nil || ip.Capabilities.Elicitation == nil {
		return nil
	}
	return func(ctx context.Context, a approvalsapi.Approval) (bool, error) {
		res, err := ss.Elicit(ctx, &mcp.ElicitParams{Message: elicitMessage(a), RequestedSchema: elicitSchema})
		if err != nil {
			return false, err
		}
		switch res.Action {
		case "accept":
			return res.Content["approve"] == true, nil
		case "decline":
			return false, nil
		}
		// Dismissed: the approval stays pending for the user's other
		// channels.
		return false, errcode.New(errcode.Cancelled, "the client's prompt was dismissed")
	}
}

// elicitSchema is the form the client shows: one yes/no.
var elicitSchema = map[string]any{
	"type": "object",
	"properties": map[string]any{
		"approve": map[string]any{"type": "boolean", "title": "Approve", "description": "Let hostlink run this exact action once"},
	},
	"required": []string{"approve"},
}

// maxElicitDiff bounds the diff an elicitation message carries; the
// console and `hostlink approvals show` have it whole.
const maxElicitDiff = 8 << 10

// elicitMessage is the approval as the client's prompt shows it: every
// field and the diff, escaped so that control characters cannot disguise
// them.
func elicitMessage(a approvalsapi.Approval) string {
	var b strings.Builder
	fmt.Fprintf(&b, "hostlink asks you to approve: %s\n", textsafe.Line(a.Action.Summary))
	for _, f := range a.Action.Fields {
		fmt.Fprintf(&b, "%s: %s\n", textsafe.Line(f.Label), textsafe.Block(f.Value))
	}
	if a.Action.Diff != "" {
		fmt.Fprintf(&b, "Diff:\n%s\n", textsafe.Block(textsafe.Clip(a.Action.Diff, maxElicitDiff)))
	}
	fmt.Fprintf(&b, "Approval %s; approving runs it once.", textsafe.Line(a.ID))
	return b.String()
}
