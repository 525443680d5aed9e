package mcpserve

import (
	"context"
	"io"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hostlink/hostlink/internal/approvals"
	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
	"github.com/hostlink/hostlink/internal/tstest"
)

// A session of hostlink's own child (a command or agent runtime that
// opened one on the control channel) is never asked to approve its own
// request, even where the user let MCP clients approve in their own
// prompt: the call is held for the user, who decides. Another client is
// asked, and its answer decides.
func TestChildSessionIsNeverAsked(t *testing.T) {
	for _, child := range []bool{true, false} {
		t.Run(map[bool]string{true: "hostlink's child", false: "a client"}[child], func(t *testing.T) {
			log, err := audit.Open(audit.Options{Dir: t.TempDir(), Key: make([]byte, 32)})
			if err != nil {
				t.Fatal(err)
			}
			defer log.Close()
			b := approvals.New(approvals.Options{})
			e := policy.New(policy.Config{ApproveInClient: true, Timeout: time.Hour, Wait: time.Hour,
				Default: policy.Rules{Modes: map[policy.Class]policy.Mode{policy.FilesRead: policy.Ask}}}, b)
			reg := ops.New(ops.Options{Audit: log, Policy: ops.Gate(e, policy.Hooks{})})
			ops.Register(reg, ops.Spec{Name: "echo", Description: "echo", Class: policy.FilesRead, Transports: ops.AllTransports, ReadOnly: true},
				func(_ context.Context, _ *ops.Call, a echoArgs) (echoResult, error) {
					return echoResult{Text: a.Text}, nil
				})
			inR, inW := io.Pipe()
			outR, outW := io.Pipe()
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go ServeResumed(ctx, reg, Client{Transport: audit.MCPStdio, Peer: "p", Session: "s", Child: child}, 1<<20, nil, inR, outW)
			var asked atomic.Int32
			c := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, &mcp.ClientOptions{
				ElicitationHandler: func(context.Context, *mcp.ElicitRequest) (*mcp.ElicitResult, error) {
					asked.Add(1)
					return &mcp.ElicitResult{Action: "accept", Content: map[string]any{"approve": true}}, nil
				}})
			// A version that lets a server elicit while it serves a call,
			// as the clients that approve in their own prompt speak.
			s, err := c.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW}, &mcp.ClientSessionOptions{ProtocolVersion: "2025-06-18"})
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			results := make(chan *mcp.CallToolResult, 1)
			go func() {
				res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: map[string]any{"text": "x"}})
				if err != nil {
					res = &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: err.Error()}}}
				}
				results <- res
			}()
			if child {
				// Held for the user, who denies it.
				tstest.WaitFor(t, 30*time.Second, "the approval", func() bool { return len(b.List(true)) == 1 })
				if _, err := b.Decide(b.List(true)[0].ID, false, "the user", audit.IPC); err != nil {
					t.Fatal(err)
				}
			}
			res := <-results
			text := res.Content[0].(*mcp.TextContent).Text
			switch {
			case child && (asked.Load() != 0 || !strings.Contains(text, "APPROVAL_DENIED")):
				t.Fatalf("hostlink's child was asked %d times; result %s", asked.Load(), text)
			case !child && (asked.Load() != 1 || res.IsError):
				t.Fatalf("the client was asked %d times; result %s", asked.Load(), text)
			}
		})
	}
}
