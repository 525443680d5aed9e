package mcpserve

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
)

// For MCP servers that present hostlink's operations without running
// them here (the mesh gateway): the same tools and results as this
// package's servers.

// Tool is op as hostlink's MCP servers list it.
func Tool(op *ops.Op) *mcp.Tool { return tool(op) }

// Result is a successful result out (of op.Out's type) as hostlink's MCP
// servers send it: text, structured content, images.
func Result(out any) (*mcp.CallToolResult, error) {
	r, err := encodeResult(out)
	if err != nil {
		return nil, err
	}
	res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(r.text)}}}
	for _, im := range ops.ImagesOf(out) {
		res.Content = append(res.Content, &mcp.ImageContent{Data: im.Data, MIMEType: im.MIMEType})
	}
	if r.structured != nil {
		res.StructuredContent = json.RawMessage(r.structured)
	}
	return res, nil
}

// ErrorResult is a failed call's result, as hostlink's MCP servers send
// it: the typed error as the text's JSON, flagged as an error.
func ErrorResult(err error) *mcp.CallToolResult {
	body, _ := json.Marshal(errorResult{errcode.As(err)})
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: string(body)}}}
}
