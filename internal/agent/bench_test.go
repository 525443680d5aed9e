package agent_test

import (
	"context"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/agent"
	"github.com/hostlink/hostlink/internal/agentapi"
)

// waitDone polls the store until task id is terminal.
func waitDone(b *testing.B, e *agent.Engine, id string) agent.Task {
	for {
		t, err := e.Store().Get(id)
		if err != nil {
			b.Fatal(err)
		}
		if t.Status.Terminal() {
			return t
		}
		time.Sleep(200 * time.Microsecond)
	}
}

// BenchmarkTasks runs whole one-turn tasks with the fake runtime, one after
// another: submit, runtime process start, session, turn, result, end.
func BenchmarkTasks(b *testing.B) {
	e := newEnv(b)
	b.ResetTimer()
	for range b.N {
		t, _, err := e.eng.Submit(context.Background(), agentapi.SubmitArgs{Runtime: "fake", Workdir: "b", Prompt: "say hi\nresult ok"})
		if err != nil {
			b.Fatal(err)
		}
		if got := waitDone(b, e.eng, t.ID); got.Status != agent.Completed {
			b.Fatalf("task %s", got.Status)
		}
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "tasks/s")
}

// BenchmarkTaskEvents streams items from the fake runtime through the
// engine into the store: each event is its own committed (fsynced)
// transaction, as a crash must never lose one.
func BenchmarkTaskEvents(b *testing.B) {
	e := newEnv(b)
	const items = 2000
	b.ResetTimer()
	var events int64
	for range b.N {
		t, _, err := e.eng.Submit(context.Background(), agentapi.SubmitArgs{Runtime: "fake", Workdir: "b", Prompt: "items 2000"})
		if err != nil {
			b.Fatal(err)
		}
		got := waitDone(b, e.eng, t.ID)
		if got.Status != agent.Completed || got.LastSeq < items {
			b.Fatalf("task %s with %d events", got.Status, got.LastSeq)
		}
		events += got.LastSeq
	}
	b.ReportMetric(float64(events)/b.Elapsed().Seconds(), "events/s")
}
