package mcpserve

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"reflect"
	"strings"
	"sync"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
)

type echoArgs struct {
	Text   string `json:"text"`
	Repeat int    `json:"repeat,omitempty"`
	Image  bool   `json:"image,omitempty"`
	Fail   bool   `json:"fail,omitempty"`
}

type echoResult struct {
	Text   string   `json:"text"`
	Lines  []string `json:"lines"`
	N      int      `json:"n"`
	images []ops.Image
}

func (r echoResult) ResultImages() []ops.Image { return r.images }

// awkward holds every kind of character a JSON encoder must get right.
const awkward = "plain \"quoted\" back\\slash\nnew\rret\ttab \x01ctl <html> & \u2028\u2029 é 日本 🙂 </script>"

// echoRegistry has one operation, echo, whose result repeats its text.
func echoRegistry(t testing.TB) *ops.Registry {
	key := make([]byte, 32)
	rand.Read(key)
	log, err := audit.Open(audit.Options{Dir: t.TempDir(), Key: key})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	reg := ops.New(ops.Options{Audit: log})
	ops.Register(reg, ops.Spec{Name: "echo", Description: "echo", Class: policy.FilesRead, Transports: ops.AllTransports, ReadOnly: true}, func(_ context.Context, _ *ops.Call, a echoArgs) (echoResult, error) {
		if a.Fail {
			return echoResult{}, errcode.New(errcode.InvalidArgument, "asked to fail: %s", a.Text)
		}
		r := echoResult{Text: strings.Repeat(a.Text, max(a.Repeat, 1)), Lines: []string{a.Text, a.Text}, N: a.Repeat}
		if a.Image {
			r.images = []ops.Image{{MIMEType: "image/png", Data: []byte("\x89PNG fake image bytes")}}
		}
		return r, nil
	})
	return reg
}

// servePipes runs Serve on in-memory pipes and returns the client's ends.
func servePipes(t *testing.T, reg *ops.Registry) (io.WriteCloser, io.ReadCloser) {
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		Serve(ctx, reg, audit.MCPStdio, "peer", inR, outW)
	}()
	t.Cleanup(func() {
		cancel()
		inW.Close()
		outR.Close()
		<-done
	})
	return inW, outR
}

// TestServeResults calls through Serve (results encoded once and spliced
// in by the connection) with the Go SDK client and checks that every
// result is what the SDK itself would have sent: structured content equal
// to the operation's result, the text block its JSON, images beside it,
// errors as error results; also under concurrent calls.
func TestServeResults(t *testing.T) {
	inW, outR := servePipes(t, echoRegistry(t))
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx,
		&mcp.IOTransport{Reader: outR, Writer: inW, MaxLineLength: 1 << 30}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer cs.Close()

	check := func(t *testing.T, args echoArgs) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "echo", Arguments: args})
		if err != nil {
			t.Fatal(err)
		}
		if args.Fail {
			if !res.IsError || len(res.Content) != 1 || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "INVALID_ARGUMENT") {
				t.Fatalf("error result: %+v", res)
			}
			return
		}
		if res.IsError {
			t.Fatalf("unexpected error result: %+v", res.Content)
		}
		want := echoResult{Text: strings.Repeat(args.Text, max(args.Repeat, 1)), Lines: []string{args.Text, args.Text}, N: args.Repeat}
		var got echoResult
		sc, _ := json.Marshal(res.StructuredContent)
		if err := json.Unmarshal(sc, &got); err != nil || !reflect.DeepEqual(got, want) {
			t.Fatalf("structured content: %v %.200q", err, sc)
		}
		text, ok := res.Content[0].(*mcp.TextContent)
		if !ok {
			t.Fatalf("first block is %T", res.Content[0])
		}
		var fromText echoResult
		if err := json.Unmarshal([]byte(text.Text), &fromText); err != nil || !reflect.DeepEqual(fromText, want) {
			t.Fatalf("text block: %v %.200q", err, text.Text)
		}
		wantBlocks := 1
		if args.Image {
			wantBlocks = 2
			im, ok := res.Content[1].(*mcp.ImageContent)
			if !ok || im.MIMEType != "image/png" || string(im.Data) != "\x89PNG fake image bytes" {
				t.Fatalf("image block: %+v", res.Content[1])
			}
		}
		if len(res.Content) != wantBlocks {
			t.Fatalf("%d content blocks, want %d", len(res.Content), wantBlocks)
		}
	}
	cases := []struct {
		name string
		args echoArgs
	}{
		{"empty", echoArgs{}},
		{"small", echoArgs{Text: "hello"}},
		{"awkward", echoArgs{Text: awkward}},
		{"large", echoArgs{Text: awkward, Repeat: 50000}},
		{"image", echoArgs{Text: "pic", Image: true}},
		{"error", echoArgs{Text: awkward, Fail: true}},
		{"looks like a placeholder", echoArgs{Text: `"structuredContent":"hostlink-result-00-1"`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) { check(t, tc.args) })
	}
	t.Run("concurrent", func(t *testing.T) {
		var wg sync.WaitGroup
		for i := range 8 {
			wg.Go(func() {
				for j := range 10 {
					check(t, echoArgs{Text: fmt.Sprintf("call %d/%d %s", i, j, awkward), Repeat: 1 + i*j*100, Image: j%3 == 0})
				}
			})
		}
		wg.Wait()
	})
}

// TestServeBatch sends a JSON-RPC batch (protocol 2025-03-26): the
// responses must come back together as one batch, with the real results.
func TestServeBatch(t *testing.T) {
	inW, outR := servePipes(t, echoRegistry(t))
	r := bufio.NewReader(outR)
	send := func(s string) {
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	recv := func() []byte {
		line, err := r.ReadBytes('\n')
		if err != nil {
			t.Fatal(err)
		}
		return line
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-03-26","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	recv()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	send(`[{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"one"}}},` +
		`{"jsonrpc":"2.0","id":"two","method":"tools/call","params":{"name":"echo","arguments":{"text":"two"}}}]`)
	line := recv()
	var batch []struct {
		ID     any `json:"id"`
		Result struct {
			Content []struct {
				Text string `json:"text"`
			} `json:"content"`
			Structured echoResult `json:"structuredContent"`
		} `json:"result"`
	}
	if err := json.Unmarshal(line, &batch); err != nil || len(batch) != 2 {
		t.Fatalf("batch response: %v %s", err, line)
	}
	for _, resp := range batch {
		want := map[any]string{1.0: "one", "two": "two"}[resp.ID]
		if want == "" || resp.Result.Structured.Text != want || !strings.Contains(resp.Result.Content[0].Text, `"text":"`+want+`"`) {
			t.Fatalf("response %v: %s", resp.ID, line)
		}
	}
	if bytes.Contains(line, []byte("hostlink-result-")) {
		t.Fatalf("placeholder leaked: %s", line)
	}
}

func TestAppendQuoted(t *testing.T) {
	for _, s := range []string{"", "plain", awkward, `{"a":"b\"c\\d\n"}`, "\x00\x1f\x7f", strings.Repeat(awkward, 100)} {
		got := appendQuoted([]byte("x"), []byte(s))
		var back string
		if got[0] != 'x' || json.Unmarshal(got[1:], &back) != nil || back != s {
			t.Errorf("appendQuoted(%q) = %s", s, got)
		}
	}
}

func BenchmarkAppendQuoted(b *testing.B) {
	body, _ := json.Marshal(map[string]any{"entries": strings.Repeat(`{"name":"entry-000000.txt","path":"list/entry-000000.txt","type":"file","size_bytes":2,"mtime":1796115024.836984},`, 10000)})
	buf := make([]byte, 0, 2*len(body))
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		buf = appendQuoted(buf[:0], body)
	}
}
