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
	"github.com/hostlink/hostlink/internal/textsafe"
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
		Serve(ctx, reg, audit.MCPStdio, "peer", 64<<20, inR, outW)
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

// TestServeBadLines: each line that is not one JSON-RPC message gets its
// JSON-RPC error (-32700 or -32600, id null unless the line had a valid
// id), and the request after it is served; nothing a client sends ends the
// session or desynchronises it.
func TestServeBadLines(t *testing.T) {
	inW, outR := servePipes(t, echoRegistry(t))
	r := bufio.NewReaderSize(outR, 1<<20)
	send := func(s string) {
		if _, err := io.WriteString(inW, s+"\n"); err != nil {
			t.Fatal(err)
		}
	}
	type response struct {
		ID     json.RawMessage `json:"id"`
		Result json.RawMessage `json:"result"`
		Error  *struct {
			Code int `json:"code"`
		} `json:"error"`
	}
	recv := func() response {
		line, err := r.ReadBytes('\n')
		if err != nil {
			t.Fatal(err)
		}
		var resp response
		if err := json.Unmarshal(line, &resp); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		return resp
	}
	send(`{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}`)
	recv()
	send(`{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	deep := func(n int) string { return strings.Repeat("[", n) + strings.Repeat("]", n) }
	for i, tt := range []struct {
		name, line string
		code       int
		id         string
	}{
		{"not JSON", "this is not JSON", -32700, "null"},
		{"truncated", `{"jsonrpc":"2.0","id":5,"method":"tools/list"`, -32700, "null"},
		{"missing jsonrpc", `{"id":6,"method":"tools/list"}`, -32600, "6"},
		{"object id", `{"jsonrpc":"2.0","id":{"x":1},"method":"tools/list"}`, -32600, "null"},
		{"nesting over 1,000", `{"jsonrpc":"2.0","id":7,"method":"ping","params":{"a":` + deep(1000) + `}}`, -32600, "null"},
		{"batch", `[{"jsonrpc":"2.0","id":8,"method":"ping"}]`, -32600, "null"},
		{"over-long line", `{"jsonrpc":"2.0","id":9,"method":"ping","params":{"x":"` + strings.Repeat("x", 64<<20) + `"}}`, -32600, "null"},
		{"a response to nothing", `{"jsonrpc":"2.0","id":10,"result":{}}`, 0, ""},
		{"unknown method", `{"jsonrpc":"2.0","id":11,"method":"no/such"}`, -32601, "11"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			send(tt.line)
			if tt.code != 0 {
				resp := recv()
				if resp.Error == nil || resp.Error.Code != tt.code || string(resp.ID) != tt.id {
					t.Fatalf("answer %+v, want error %d for id %s", resp, tt.code, tt.id)
				}
			}
			// The session goes on: a call right after it is answered.
			id := 100 + i
			send(fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"echo","arguments":{"text":"after"}}}`, id))
			resp := recv()
			if string(resp.ID) != fmt.Sprint(id) || resp.Error != nil || !bytes.Contains(resp.Result, []byte(`"text":"after"`)) {
				t.Fatalf("call after it: %+v %s", resp, resp.Result)
			}
		})
	}
	t.Run("nesting at 1,000 is served", func(t *testing.T) {
		send(`{"jsonrpc":"2.0","id":200,"method":"ping","params":{"a":` + deep(998) + `}}`)
		if resp := recv(); string(resp.ID) != "200" || resp.Error != nil {
			t.Fatalf("ping: %+v", resp)
		}
	})
}

// TestWriteQuoted: a text written in chunks is one JSON string of it,
// whatever character straddles a chunk's end.
func TestWriteQuoted(t *testing.T) {
	texts := []string{"", "plain", awkward, `{"a":"b\"c\\d\n"}`, "\x00\x1f\x7f", strings.Repeat(awkward, 1000)}
	for pad := range 9 {
		// A 2-, 3- and 4-byte character cut by the first chunk's end
		// after each of their bytes.
		texts = append(texts, strings.Repeat("x", 16<<10-pad)+"é日🙂"+strings.Repeat("\"", 20<<10))
	}
	for _, s := range texts {
		var buf bytes.Buffer
		w := bufio.NewWriter(&buf)
		writeQuoted(w, []byte(s))
		w.Flush()
		var back string
		if err := json.Unmarshal(buf.Bytes(), &back); err != nil || back != s {
			t.Errorf("writeQuoted(%.40q) = %.80s (%v)", s, buf.Bytes(), err)
		}
	}
}

func BenchmarkAppendQuoted(b *testing.B) {
	body, _ := json.Marshal(map[string]any{"entries": strings.Repeat(`{"name":"entry-000000.txt","path":"list/entry-000000.txt","type":"file","size_bytes":2,"mtime":1796115024.836984},`, 10000)})
	buf := make([]byte, 0, 2*len(body))
	b.SetBytes(int64(len(body)))
	for b.Loop() {
		buf = textsafe.AppendJSONString(buf[:0], body)
	}
}
