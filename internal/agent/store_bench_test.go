package agent

import (
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/agentapi"
)

// BenchmarkStoreAppend is the store alone: one committed transaction per
// event, as a runtime's stream is recorded.
func BenchmarkStoreAppend(b *testing.B) {
	s, err := OpenStore(b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	id := newID("task_")
	if _, _, err := s.Create(Task{ID: id, Created: time.Now(), Status: Queued, Runtime: "fake", Workdir: "a", Cwd: ".",
		Access: ReadOnly, RequestSHA256: "r", Manifest: []byte("{}"), ManifestSHA256: "m", PolicyFingerprint: "p", Owner: "o"}, nil); err != nil {
		b.Fatal(err)
	}
	ev := agentapi.Event{Type: "item.delta", SessionID: "s", TurnID: "t", ItemID: "i", Data: map[string]any{"kind": "agent_message", "text": "a few words of output"}}
	b.ResetTimer()
	for range b.N {
		if err := s.Append(id, time.Now(), []agentapi.Event{ev}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "events/s")
}
