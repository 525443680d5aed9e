package link_test

import (
	"context"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/devplatform"
	"github.com/hostlink/hostlink/internal/link"
)

// benchSession is a legacy data connection to a root holding a 512 KiB file.
func benchSession(b *testing.B) *devplatform.Peer {
	root := b.TempDir()
	os.WriteFile(filepath.Join(root, "half.bin"), make([]byte, 512<<10), 0o600)
	f := newFixtureWith(b, devplatform.Config{MaxConcurrent: 64, PingIntervalSeconds: -1}, func(o *link.Options) {
		o.Session, o.LegacyRoot = "bench", root
		o.Local.MaxConcurrent = 64
	})
	return f.peer(b, "bench", time.Time{})
}

// BenchmarkFileStat is one FILE_STAT round trip over a loopback WebSocket,
// through the registry and the audit log.
func BenchmarkFileStat(b *testing.B) {
	p := benchSession(b)
	ctx := context.Background()
	b.ResetTimer()
	for range b.N {
		if e, err := p.Request(ctx, "FILE_STAT", "", map[string]any{"path": "half.bin"}); err != nil || e.Type != "FILE_STAT_RESPONSE" {
			b.Fatal(err, e)
		}
	}
}

// BenchmarkFileRead512KiB reads a 512 KiB file as base64 per round trip.
func BenchmarkFileRead512KiB(b *testing.B) {
	p := benchSession(b)
	ctx := context.Background()
	b.SetBytes(512 << 10)
	b.ResetTimer()
	for range b.N {
		if e, err := p.Request(ctx, "FILE_READ", "", map[string]any{"path": "half.bin", "encoding": "base64"}); err != nil || e.Type != "FILE_CONTENTS" {
			b.Fatal(err, e)
		}
	}
}

// BenchmarkFileStatParallel pipelines FILE_STATs from many goroutines on
// one connection, as a platform may.
func BenchmarkFileStatParallel(b *testing.B) {
	p := benchSession(b)
	ctx := context.Background()
	b.SetParallelism(8)
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			if e, err := p.Request(ctx, "FILE_STAT", "", map[string]any{"path": "half.bin"}); err != nil || e.Type != "FILE_STAT_RESPONSE" {
				b.Error(err, e)
				return
			}
		}
	})
}
