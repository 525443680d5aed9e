package desktop

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/desktopapi"
	"github.com/hostlink/hostlink/internal/mcpserve"
)

// TestObserveOverMCP calls the operations through hostlink's MCP server
// with the Go SDK's client over a JSON-RPC transport: the image arrives as
// image content that decodes to the screen's pixels, and the JSON text
// carries the observation without it.
func TestObserveOverMCP(t *testing.T) {
	e := newEnv(t, 640, 480)
	e.d.Xterm("mcp-term", 20, 20, t.TempDir())
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	srv := mcpserve.NewServer(e.reg, audit.MCPStdio, "test")
	ss, err := srv.Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer ss.Close()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil)
	cs, err := client.Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	var res *mcp.CallToolResult
	screen := e.d.Still(func() {
		res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "computer_observe", Arguments: map[string]any{}})
	})
	if err != nil || res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	if len(res.Content) != 2 {
		t.Fatalf("%d content items", len(res.Content))
	}
	text, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		t.Fatalf("first content %T", res.Content[0])
	}
	var obs desktopapi.Observation
	if err := json.Unmarshal([]byte(text.Text), &obs); err != nil || obs.ObservationID == "" {
		t.Fatalf("JSON text: %v %q", err, text.Text)
	}
	im, ok := res.Content[1].(*mcp.ImageContent)
	if !ok || im.MIMEType != "image/png" || len(im.Data) != obs.Image.Bytes {
		t.Fatalf("image content %T %q %d bytes (JSON says %d)", res.Content[1], im.MIMEType, len(im.Data), obs.Image.Bytes)
	}
	img := decodePNG(t, im.Data)
	if n := differ(img, screen, 0, 0); n != 0 || img.Rect.Dx() != 640 {
		t.Fatalf("%d pixels differ (image %v)", n, img.Rect)
	}
	// An act over MCP returns its receipt and the fresh observation's image.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "computer_act", Arguments: map[string]any{
		"observation_id": obs.ObservationID, "action": "move", "x": 33, "y": 44, "settle_ms": 0}})
	if err != nil || res.IsError || len(res.Content) != 2 {
		t.Fatalf("%v %+v", err, res)
	}
	var act desktopapi.ActResult
	json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &act)
	if act.Receipt.Status != desktopapi.Accepted || act.Observation == nil || act.Observation.Cursor == nil || *act.Observation.Cursor != (desktopapi.Point{X: 33, Y: 44}) {
		t.Fatalf("act %+v", act)
	}
	if _, ok := res.Content[1].(*mcp.ImageContent); !ok {
		t.Fatalf("act content %T", res.Content[1])
	}
	// A refused act is an error result with its code.
	res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "computer_act", Arguments: map[string]any{
		"observation_id": obs.ObservationID, "action": "move", "x": 1, "y": 1}})
	if err != nil || !res.IsError {
		t.Fatalf("%v %+v", err, res)
	}
	var body struct{ Error struct{ Code string } }
	json.Unmarshal([]byte(res.Content[0].(*mcp.TextContent).Text), &body)
	if body.Error.Code != string(ObservationConsumed) {
		t.Fatalf("refusal %q", res.Content[0].(*mcp.TextContent).Text)
	}
}
