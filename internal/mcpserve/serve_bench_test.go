package mcpserve_test

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/files"
	"github.com/hostlink/hostlink/internal/jail"
	"github.com/hostlink/hostlink/internal/mcpserve"
	"github.com/hostlink/hostlink/internal/ops"
)

// The Serve benchmarks measure the server's side of one tools/call on the
// file operations over a real workdir and audit log: the client writes raw
// JSON-RPC lines and reads the response line without decoding it, so the
// figures are what hostlink spends (adapter, registry, jail, audit and the
// SDK's encoding), not what a client spends parsing the answer.

// rawClient is the client end of a stdio-like pipe to the server.
type rawClient struct {
	w  io.Writer
	r  *bufio.Reader
	id int
}

func (c *rawClient) send(b *testing.B, line string) {
	if _, err := io.WriteString(c.w, line+"\n"); err != nil {
		b.Fatal(err)
	}
}

// recv returns the next response line, skipping notifications.
func (c *rawClient) recv(b *testing.B) []byte {
	for {
		line, err := c.r.ReadBytes('\n')
		if err != nil {
			b.Fatal(err)
		}
		if !strings.HasPrefix(string(line[:min(len(line), 64)]), `{"jsonrpc":"2.0","method"`) {
			return line
		}
	}
}

// call sends one tools/call and fails on an error result.
func (c *rawClient) call(b *testing.B, req []byte) int {
	c.id++
	c.send(b, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,%s`, c.id, req[1:]))
	line := c.recv(b)
	if strings.Contains(string(line[:min(len(line), 200)]), `"isError":true`) || strings.Contains(string(line[:min(len(line), 64)]), `"error"`) {
		b.Fatalf("call failed: %.300s", line)
	}
	return len(line)
}

// serveFiles starts the MCP server over the file operations on a workdir
// prepared by setup, and returns a connected raw client.
func serveFiles(b *testing.B, limits files.Limits, setup func(root string)) *rawClient {
	b.Helper()
	base := b.TempDir()
	root := filepath.Join(base, "root")
	if err := os.Mkdir(root, 0o755); err != nil {
		b.Fatal(err)
	}
	setup(root)
	jr, err := jail.Open(root, jail.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { jr.Close() })
	key := make([]byte, 32)
	rand.Read(key)
	log, err := audit.Open(audit.Options{Dir: filepath.Join(base, "audit"), Key: key, MachineID: "bench", Version: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { log.Close() })
	reg := ops.New(ops.Options{Audit: log})
	files.Register(reg, files.NewService([]*files.Workdir{{Alias: "main", Root: jr}}, limits))

	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() {
		done <- mcpserve.Serve(ctx, reg, audit.MCPStdio, "bench", 64<<20, inR, outW)
	}()
	b.Cleanup(func() {
		cancel()
		inW.Close()
		outR.Close()
		<-done
	})
	c := &rawClient{w: inW, r: bufio.NewReaderSize(outR, 1<<20)}
	c.send(b, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
	c.recv(b)
	c.send(b, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
	return c
}

func benchServe(b *testing.B, c *rawClient, tool string, args any) {
	req, _ := json.Marshal(map[string]any{"method": "tools/call", "params": map[string]any{"name": tool, "arguments": args}})
	c.call(b, req) // warm up
	n := 0
	for b.Loop() {
		n = c.call(b, req)
	}
	b.ReportMetric(float64(n), "resp-bytes")
}

var benchLimits = files.Limits{
	MaxReadBytes:       64 << 20,
	MaxWriteBytes:      64 << 20,
	MaxListEntries:     100000,
	MaxSearchMatches:   100000,
	MaxSearchBytes:     1 << 30,
	MaxSearchFileBytes: 16 << 20,
}

// textOf returns n bytes of 64-byte text lines, like the bench driver's data.
func textOf(n int) []byte {
	var sb strings.Builder
	for i := 0; sb.Len() < n; i++ {
		fmt.Fprintf(&sb, "line %08d seed %06d the quick brown fox jumps over the lazy dog.\n", i, 2)
	}
	return []byte(sb.String()[:n])
}

func BenchmarkServeListWorkdirs(b *testing.B) {
	c := serveFiles(b, benchLimits, func(string) {})
	benchServe(b, c, "list_workdirs", map[string]any{})
}

func BenchmarkServeReadFile4K(b *testing.B) {
	c := serveFiles(b, benchLimits, func(root string) {
		os.WriteFile(filepath.Join(root, "small.txt"), textOf(4096), 0o644)
	})
	benchServe(b, c, "read_file", map[string]any{"path": "small.txt"})
}

func BenchmarkServeReadFile10MiB(b *testing.B) {
	c := serveFiles(b, benchLimits, func(root string) {
		os.WriteFile(filepath.Join(root, "big.txt"), textOf(10<<20), 0o644)
	})
	benchServe(b, c, "read_file", map[string]any{"path": "big.txt"})
}

func BenchmarkServeWriteFile4K(b *testing.B) {
	c := serveFiles(b, benchLimits, func(string) {})
	benchServe(b, c, "write_file", map[string]any{"path": "w.txt", "content": string(textOf(4096))})
}

func BenchmarkServeListDirectory10k(b *testing.B) {
	c := serveFiles(b, benchLimits, listDir10k)
	benchServe(b, c, "list_directory", map[string]any{"path": "list", "max_entries": 100000})
}

// BenchmarkSessionStart is one stdio session's start as a client sees it:
// initialize and tools/list over the file operations, then the end of the
// session. It is the server's share of a client's cold start with the
// daemon running.
func BenchmarkSessionStart(b *testing.B) {
	base := b.TempDir()
	jr, err := jail.Open(base, jail.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { jr.Close() })
	reg := ops.New(ops.Options{})
	files.Register(reg, files.NewService([]*files.Workdir{{Alias: "main", Root: jr}}, benchLimits))
	for b.Loop() {
		inR, inW := io.Pipe()
		outR, outW := io.Pipe()
		done := make(chan error, 1)
		go func() { done <- mcpserve.Serve(context.Background(), reg, audit.MCPStdio, "bench", 64<<20, inR, outW) }()
		c := &rawClient{w: inW, r: bufio.NewReaderSize(outR, 1<<20)}
		c.send(b, `{"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}}`)
		c.recv(b)
		c.send(b, `{"jsonrpc":"2.0","method":"notifications/initialized"}`)
		c.send(b, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
		c.recv(b)
		inW.Close()
		<-done
		outR.Close()
	}
}

// listDir10k lays out the 10,000-file directory "list" the listing
// benchmarks read.
func listDir10k(root string) {
	dir := filepath.Join(root, "list")
	os.Mkdir(dir, 0o755)
	for i := range 10000 {
		os.WriteFile(filepath.Join(dir, fmt.Sprintf("entry-%06d.txt", i)), []byte("x\n"), 0o644)
	}
}

func BenchmarkServeListDirectory10kDetails(b *testing.B) {
	c := serveFiles(b, benchLimits, listDir10k)
	benchServe(b, c, "list_directory", map[string]any{"path": "list", "max_entries": 100000, "details": true})
}

// nextCursor finds the next_cursor in a raw tools/call response line
// (inside the text block, its quotes escaped).
var nextCursor = regexp.MustCompile(`next_cursor\\":\\"([A-Za-z0-9_-]+)`)

// BenchmarkServeListDirectory10kPaged is the whole 10,000-entry directory
// read through pages of 1,000 (the default page size), one op per whole
// directory.
func BenchmarkServeListDirectory10kPaged(b *testing.B) {
	c := serveFiles(b, benchLimits, listDir10k)
	listAll := func() (calls, bytes int) {
		args := map[string]any{"path": "list", "max_entries": 1000}
		for {
			req, _ := json.Marshal(map[string]any{"method": "tools/call", "params": map[string]any{"name": "list_directory", "arguments": args}})
			c.id++
			c.send(b, fmt.Sprintf(`{"jsonrpc":"2.0","id":%d,%s`, c.id, req[1:]))
			line := c.recv(b)
			calls, bytes = calls+1, bytes+len(line)
			if strings.Contains(string(line[:min(len(line), 200)]), `"isError":true`) {
				b.Fatalf("call failed: %.300s", line)
			}
			m := nextCursor.FindSubmatch(line[:min(len(line), 400)])
			if m == nil {
				return calls, bytes
			}
			args["cursor"] = string(m[1])
		}
	}
	listAll()
	calls, n := 0, 0
	for b.Loop() {
		calls, n = listAll()
	}
	if calls != 10 {
		b.Fatalf("%d pages, want 10", calls)
	}
	b.ReportMetric(float64(n), "resp-bytes")
}

// BenchmarkSDKListDirectory10k is a 10,000-entry listing as a Go SDK
// client gets it over stdio: the server's work, the client's decoding
// and its checks of the result.
func BenchmarkSDKListDirectory10k(b *testing.B) {
	base := b.TempDir()
	listDir10k(base)
	jr, err := jail.Open(base, jail.Options{})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { jr.Close() })
	key := make([]byte, 32)
	rand.Read(key)
	log, err := audit.Open(audit.Options{Dir: b.TempDir(), Key: key, MachineID: "bench", Version: "bench"})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { log.Close() })
	reg := ops.New(ops.Options{Audit: log})
	files.Register(reg, files.NewService([]*files.Workdir{{Alias: "main", Root: jr}}, benchLimits))
	inR, inW := io.Pipe()
	outR, outW := io.Pipe()
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- mcpserve.Serve(ctx, reg, audit.MCPStdio, "bench", 64<<20, inR, outW) }()
	b.Cleanup(func() {
		cancel()
		inW.Close()
		outR.Close()
		<-done
	})
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "bench", Version: "1"}, nil).Connect(ctx,
		&mcp.IOTransport{Reader: outR, Writer: inW, MaxLineLength: 1 << 30}, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	params := &mcp.CallToolParams{Name: "list_directory", Arguments: map[string]any{"path": "list", "max_entries": 100000}}
	for b.Loop() {
		res, err := cs.CallTool(ctx, params)
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}
