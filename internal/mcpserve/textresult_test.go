package mcpserve

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
)

// rendered has a text rendering of its own (textAppender).
type rendered struct {
	Text string `json:"text"`
}

func (r rendered) AppendText(b []byte) []byte { return append(append(b, "rendered: "...), r.Text...) }

// textual goes to MCP clients as text only (textOnly).
type textual struct {
	Text string `json:"text"`
}

func (r textual) AppendText(b []byte) []byte { return append(append(b, "only: "...), r.Text...) }
func (textual) TextOnly()                    {}

func textRegistry(t testing.TB) *ops.Registry {
	reg := echoRegistry(t)
	ops.Register(reg, ops.Spec{Name: "render", Description: "render", Class: policy.FilesRead, Transports: ops.AllTransports, ReadOnly: true}, func(_ context.Context, _ *ops.Call, a echoArgs) (rendered, error) {
		return rendered{Text: strings.Repeat(a.Text, max(a.Repeat, 1))}, nil
	})
	ops.Register(reg, ops.Spec{Name: "textual", Description: "textual", Class: policy.FilesRead, Transports: ops.AllTransports, ReadOnly: true}, func(_ context.Context, _ *ops.Call, a echoArgs) (textual, error) {
		return textual{Text: strings.Repeat(a.Text, max(a.Repeat, 1))}, nil
	})
	return reg
}

// TestTextResults: a result with its own text rendering keeps its JSON as
// structured content and sends the rendering as its text block; a
// text-only result has no structured content and its tool no output
// schema. Over stdio (results spliced in by the connection) and over
// Streamable HTTP (the SDK's encoding) alike.
func TestTextResults(t *testing.T) {
	reg := textRegistry(t)
	ctx := context.Background()
	for name, cs := range bothTransports(t, reg) {
		tools, err := cs.ListTools(ctx, nil)
		if err != nil {
			t.Fatal(err)
		}
		for _, tl := range tools.Tools {
			if has := tl.OutputSchema != nil; has != (tl.Name != "textual") {
				t.Errorf("%s: tool %s lists an output schema: %v", name, tl.Name, has)
			}
		}
		for _, text := range []string{"x", awkward, strings.Repeat(awkward, 20000)} {
			res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "render", Arguments: echoArgs{Text: text}})
			if err != nil || res.IsError || len(res.Content) != 1 {
				t.Fatalf("%s render: %v %+v", name, err, res)
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != "rendered: "+text {
				t.Errorf("%s render: text %.100q", name, got)
			}
			var sc rendered
			b, _ := json.Marshal(res.StructuredContent)
			if json.Unmarshal(b, &sc); sc.Text != text {
				t.Errorf("%s render: structured content %.100s", name, b)
			}
			res, err = cs.CallTool(ctx, &mcp.CallToolParams{Name: "textual", Arguments: echoArgs{Text: text}})
			if err != nil || res.IsError || len(res.Content) != 1 {
				t.Fatalf("%s textual: %v %+v", name, err, res)
			}
			if got := res.Content[0].(*mcp.TextContent).Text; got != "only: "+text {
				t.Errorf("%s textual: text %.100q", name, got)
			}
			if res.StructuredContent != nil {
				t.Errorf("%s textual: structured content %v", name, res.StructuredContent)
			}
		}
	}
}

// bothTransports connects the Go SDK client to reg over stdio (results
// spliced in by the connection) and over Streamable HTTP (the SDK's
// encoding), both closed at the end of the test.
func bothTransports(t *testing.T, reg *ops.Registry) map[string]*mcp.ClientSession {
	t.Helper()
	inW, outR := servePipes(t, reg)
	srv := httptest.NewServer(NewHTTPHandler(reg, HTTPOptions{Token: "tok-tok-tok-tok"}))
	t.Cleanup(srv.Close)
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	stdio, err := client.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW, MaxLineLength: 1 << 30}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdio.Close() })
	web, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL,
		HTTPClient: &http.Client{Transport: bearer{"tok-tok-tok-tok"}}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { web.Close() })
	return map[string]*mcp.ClientSession{"stdio": stdio, "http": web}
}
