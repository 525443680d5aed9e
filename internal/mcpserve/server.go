package mcpserve

import (
	"context"
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/version"
)

// NewServer returns an MCP server exposing every operation in reg. Calls are
// attributed to transport and peer in the audit log.
func NewServer(reg *ops.Registry, transport, peer string) *mcp.Server {
	s := mcp.NewServer(&mcp.Implementation{Name: "hostlink", Title: "hostlink", Version: version.Version}, &mcp.ServerOptions{
		Instructions: "hostlink acts on this computer's files inside configured workdirs. " +
			"Call list_workdirs first; every path is relative to a workdir (or absolute inside one). " +
			"Errors carry a stable code such as PATH_OUTSIDE_ALLOWED_ROOT.",
	})
	for _, op := range reg.Ops() {
		s.AddTool(tool(op), handler(reg, op.Name, transport, peer))
	}
	return s
}

func tool(op *ops.Op) *mcp.Tool {
	destructive := op.Destructive
	closed := false
	return &mcp.Tool{
		Name:         op.Name,
		Title:        op.Title,
		Description:  op.Description,
		InputSchema:  op.InputSchema,
		OutputSchema: op.OutputSchema,
		Annotations: &mcp.ToolAnnotations{
			Title:           op.Title,
			ReadOnlyHint:    op.ReadOnly,
			DestructiveHint: &destructive,
			IdempotentHint:  op.Idempotent,
			OpenWorldHint:   &closed,
		},
	}
}

// errorResult is the structured body of a failed call.
type errorResult struct {
	Error *errcode.Error `json:"error"`
}

func handler(reg *ops.Registry, name, transport, peer string) mcp.ToolHandler {
	return func(ctx context.Context, req *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
		var progress ops.ProgressFunc
		if token := req.Params.GetProgressToken(); token != nil && req.Session != nil {
			progress = func(done, total float64, msg string) {
				req.Session.NotifyProgress(ctx, &mcp.ProgressNotificationParams{
					ProgressToken: token, Progress: done, Total: total, Message: msg,
				})
			}
		}
		caller := ops.Caller{Transport: transport, Peer: peer}
		out, err := reg.Call(ctx, caller, name, req.Params.Arguments, progress)
		if err != nil {
			body, _ := json.Marshal(errorResult{errcode.As(err)})
			return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(body)}}}, nil
		}
		body, merr := json.Marshal(out)
		if merr != nil {
			return nil, merr
		}
		content := []mcp.Content{&mcp.TextContent{Text: string(body)}}
		// Images go as image content beside the JSON, never inside it.
		for _, im := range ops.ImagesOf(out) {
			content = append(content, &mcp.ImageContent{Data: im.Data, MIMEType: im.MIMEType})
		}
		return &mcp.CallToolResult{
			Content:           content,
			StructuredContent: json.RawMessage(body),
		}, nil
	}
}

// ServeStdio serves reg on standard input and output until the client
// disconnects or ctx is done. peer describes the client for the audit log.
func ServeStdio(ctx context.Context, reg *ops.Registry, peer string) error {
	return NewServer(reg, ops.TransportMCPStdio, peer).Run(ctx, &mcp.StdioTransport{})
}
