package mcpserve

import (
	"bufio"
	"context"
	"encoding/json"
	"io"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/jsonrpcline"
)

// TestMessage: a checked line becomes the message jsonrpc.DecodeMessage
// makes of it, for every kind of message and id.
func TestMessage(t *testing.T) {
	for _, line := range []string{
		`{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"echo","arguments":{"text":"x"}}}`,
		`{"jsonrpc":"2.0","id":"req-\u00e9\"1","method":"tools/list"}`,
		`{"jsonrpc":"2.0","id":-9007199254740991,"method":"ping","params":null}`,
		`{"jsonrpc":"2.0","id":9007199254740991,"method":"ping","params":[1,2]}`,
		`{"jsonrpc":"2.0","method":"notifications/initialized"}`,
		`{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":3}}`,
		`{"jsonrpc":"2.0","id":"e1","result":{"action":"accept","content":{"ok":true}}}`,
		`{"jsonrpc":"2.0","id":4,"result":null}`,
		`{"jsonrpc":"2.0","id":5,"error":{"code":-32601,"message":"no such method","data":{"why":"x"}}}`,
		`{"jsonrpc":"2.0","id":6,"result":{},"error":null}`,
	} {
		m, lerr := jsonrpcline.Parse([]byte(line))
		if lerr != nil {
			t.Fatalf("%s: %v", line, lerr)
		}
		got, err := message(m)
		if err != nil {
			t.Fatalf("%s: %v", line, err)
		}
		want, err := jsonrpc.DecodeMessage([]byte(line))
		if err != nil {
			t.Fatalf("%s: the SDK: %v", line, err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s:\n got %#v\nwant %#v", line, got, want)
		}
	}
}

// TestServeEndsWithItsContext: a session whose client neither sends nor
// closes ends when its context does, since closing the connection ends
// the read that waits for the client; the client sees the end of output.
func TestServeEndsWithItsContext(t *testing.T) {
	inR, inW := io.Pipe()
	defer inW.Close()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, echoRegistry(t), audit.MCPStdio, "peer", 1<<20, inR, outW) }()
	r := bufio.NewReader(outR)
	io.WriteString(inW, `{"jsonrpc":"2.0","id":"a","method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`+"\n")
	line, err := r.ReadBytes('\n')
	var resp struct {
		ID json.RawMessage `json:"id"`
	}
	if err != nil || json.Unmarshal(line, &resp) != nil || string(resp.ID) != `"a"` {
		t.Fatalf("initialize: %s, %v", line, err)
	}
	cancel()
	select {
	case <-done:
	case <-time.After(10 * time.Second):
		t.Fatal("Serve still runs after its context ended, the client still connected")
	}
	if rest, err := io.ReadAll(r); err != nil || strings.TrimSpace(string(rest)) != "" {
		t.Fatalf("after the end: %q, %v", rest, err)
	}
}

// TestServeResumed: a resumed session is initialized by the replayed
// initialize, whose answer the client never sees; the client's calls are
// served without an initialize of its own.
func TestServeResumed(t *testing.T) {
	for _, initialized := range []bool{true, false} {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		resumed := &Resumed{Initialize: json.RawMessage(`{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}`), Initialized: initialized}
		reg := echoRegistry(t)
		go func() {
			done <- ServeResumed(ctx, reg, Client{Transport: audit.MCPStdio, Peer: "peer", Session: "s"}, 1<<20, resumed, inR, outW)
		}()
		lines := make(chan []byte, 8)
		go func() {
			r := bufio.NewReader(outR)
			for {
				line, err := r.ReadBytes('\n')
				if err != nil {
					close(lines)
					return
				}
				lines <- line
			}
		}()
		if !initialized {
			io.WriteString(inW, `{"jsonrpc":"2.0","method":"notifications/initialized"}`+"\n")
		}
		io.WriteString(inW, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`+"\n")
		io.WriteString(inW, `{"jsonrpc":"2.0","id":"b","method":"tools/list"}`+"\n")
		// The requests are served concurrently: their answers come in
		// either order, and nothing else comes first.
		want := map[string]bool{`1`: true, `"b"`: true}
		for range 2 {
			line := <-lines
			var resp struct {
				ID     json.RawMessage `json:"id"`
				Result struct {
					Tools []any `json:"tools"`
				} `json:"result"`
			}
			if json.Unmarshal(line, &resp) != nil || !want[string(resp.ID)] || len(resp.Result.Tools) == 0 {
				t.Fatalf("initialized %v: want the lists for ids 1 and \"b\", got %s", initialized, line)
			}
			delete(want, string(resp.ID))
		}
		cancel()
		inW.Close()
		<-done
		outW.Close()
		for line := range lines {
			t.Errorf("initialized %v: more: %s", initialized, line)
		}
	}
}
