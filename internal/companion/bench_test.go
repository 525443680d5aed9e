package companion

import (
	"context"
	"testing"

	"github.com/hostlink/hostlink/internal/ops/opstest"
)

// BenchmarkTransfer8MiB: a command writing 8 MiB to stdout on the
// companion, run and transferred as verified 64 KiB chunks to the runtime
// over loopback.
func BenchmarkTransfer8MiB(b *testing.B) {
	r := newRig(b, false)
	r.companion(HostOptions{Credential: r.pair()})
	args := map[string]any{"command": "yes hostlink | head -c 8388608", "shell": "sh"}
	b.SetBytes(8 << 20)
	for b.Loop() {
		m, code := opstest.Call(context.Background(), r.reg, "companion_run_command", args)
		if code != "" || m["transfer_error"] != nil {
			b.Fatal(code, m["transfer_error"])
		}
	}
}
