package mesh_test

import (
	"context"
	"testing"

	"github.com/hostlink/hostlink/internal/policy"
)

// BenchmarkCall is one small read_file through the caller and an
// executor on a one-node hub, in this process: the request path's own
// cost (signing, the bus, verification, the registry), serial and with
// 16 calls at once.
func BenchmarkCall(b *testing.B) {
	f := newFixture(b, "", []policy.Class{policy.FilesRead})
	args := []byte(`{"path":"f.txt"}`)
	b.Run("serial", func(b *testing.B) {
		for b.Loop() {
			if _, err := f.client.Call(context.Background(), f.ex.Key(), "read_file", args, ""); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("parallel16", func(b *testing.B) {
		b.SetParallelism(8) // 16 on two cores
		b.RunParallel(func(pb *testing.PB) {
			for pb.Next() {
				if _, err := f.client.Call(context.Background(), f.ex.Key(), "read_file", args, ""); err != nil {
					b.Error(err)
					return
				}
			}
		})
	})
}
