package mcpserve

import (
	"context"
	"crypto/rand"
	"fmt"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
)

type bigArgs struct {
	N int `json:"n"`
}

type bigEntry struct {
	Name      string  `json:"name"`
	Path      string  `json:"path"`
	Type      string  `json:"type" enum:"file,dir,symlink,other"`
	IsFile    bool    `json:"is_file"`
	SizeBytes int64   `json:"size_bytes"`
	Mtime     float64 `json:"mtime"`
}

type bigResult struct {
	Entries []bigEntry `json:"entries"`
}

// benchSession connects a Go SDK client in memory to a server whose one
// operation, big, returns n listing-like entries.
func benchSession(b *testing.B) *mcp.ClientSession {
	b.Helper()
	key := make([]byte, 32)
	rand.Read(key)
	log, err := audit.Open(audit.Options{Dir: b.TempDir(), Key: key})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { log.Close() })
	reg := ops.New(ops.Options{Audit: log})
	ops.Register(reg, ops.Spec{Name: "big", Description: "big", Class: policy.FilesRead, Transports: ops.AllTransports, ReadOnly: true}, func(_ context.Context, _ *ops.Call, a bigArgs) (bigResult, error) {
		r := bigResult{Entries: make([]bigEntry, a.N)}
		for i := range r.Entries {
			r.Entries[i] = bigEntry{Name: fmt.Sprintf("f%05d.txt", i), Path: fmt.Sprintf("big/f%05d.txt", i), Type: "file", IsFile: true, Mtime: 1.7e9}
		}
		return r, nil
	})
	ct, st := mcp.NewInMemoryTransports()
	ctx := context.Background()
	ss, err := NewServer(reg, audit.MCPStdio, "").Connect(ctx, st, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "b", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { cs.Close() })
	return cs
}

// BenchmarkLargeResult measures what the MCP adapter adds to an operation
// whose result is large (10,000 listing-like entries): encoding, the SDK's
// checks and the in-memory round trip, with the operation itself free.
func BenchmarkLargeResult(b *testing.B) {
	cs := benchSession(b)
	ctx := context.Background()
	for b.Loop() {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: "big", Arguments: map[string]any{"n": 10000}})
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}

// BenchmarkSmallCall is the per-call floor: a trivial operation through the
// MCP adapter, the registry and an audited append.
func BenchmarkSmallCall(b *testing.B) {
	cs := benchSession(b)
	for b.Loop() {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: "big", Arguments: map[string]any{"n": 1}})
		if err != nil || res.IsError {
			b.Fatal(err, res)
		}
	}
}
