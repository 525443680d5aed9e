package mcpserve

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hostlink/hostlink/internal/ops"
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
	ops.Register(reg, ops.Spec{Name: "render", ReadOnly: true}, func(_ context.Context, _ *ops.Call, a echoArgs) (rendered, error) {
		return rendered{Text: strings.Repeat(a.Text, max(a.Repeat, 1))}, nil
	})
	ops.Register(reg, ops.Spec{Name: "textual", ReadOnly: true}, func(_ context.Context, _ *ops.Call, a echoArgs) (textual, error) {
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
	inW, outR := servePipes(t, reg)
	srv := httptest.NewServer(NewHTTPHandler(reg, HTTPOptions{Token: "tok-tok-tok-tok"}))
	defer srv.Close()
	ctx := context.Background()
	client := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil)
	stdio, err := client.Connect(ctx, &mcp.IOTransport{Reader: outR, Writer: inW, MaxLineLength: 1 << 30}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer stdio.Close()
	web, err := client.Connect(ctx, &mcp.StreamableClientTransport{Endpoint: srv.URL,
		HTTPClient: &http.Client{Transport: bearer{"tok-tok-tok-tok"}}, DisableStandaloneSSE: true}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer web.Close()
	for name, cs := range map[string]*mcp.ClientSession{"stdio": stdio, "http": web} {
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

// TestTextResultsBatch: in a JSON-RPC batch (spliced by the fallback) a
// text-only result carries no structured content and leaks no placeholder.
func TestTextResultsBatch(t *testing.T) {
	inW, outR := servePipes(t, textRegistry(t))
	r := bufio.NewReader(outR)
	send := func(s string) {
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	recv := func() string {
		line, err := r.ReadString('\n')
		if err != nil {
			t.Fatal(err)
		}
		return line
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	recv()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"textual","arguments":{"text":"one"}}},` +
		`{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"render","arguments":{"text":"two"}}}]`)
	line := recv()
	var batch []struct {
		ID     int `json:"id"`
		Result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			Structured *rendered `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal([]byte(line), &batch); err != nil || len(batch) != 2 || strings.Contains(line, "hostlink-result-") {
		t.Fatalf("batch response: %v %s", err, line)
	}
	for _, resp := range batch {
		switch {
		case resp.ID == 1 && (resp.Result.Content[0].Text != "only: one" || resp.Result.Structured != nil),
			resp.ID == 2 && (resp.Result.Content[0].Text != "rendered: two" || resp.Result.Structured == nil || resp.Result.Structured.Text != "two"):
			t.Errorf("response %d: %s", resp.ID, line)
		}
	}
}
