package agent_test

import (
	"context"
	"sync"
	"testing"

	"github.com/hostlink/hostlink/internal/agent"
)

// lateStart is the fake runtime with StartTurn returning only once the
// engine has been told the turn ended: the order a fast turn can take on
// a busy machine, when the adapter's goroutine reports the whole turn
// before the goroutine that asked for it runs again.
type lateStart struct {
	agent.Runtime
	mu    sync.Mutex
	ended map[string]chan struct{}
}

func (l *lateStart) done(turnID string) chan struct{} {
	l.mu.Lock()
	defer l.mu.Unlock()
	c, ok := l.ended[turnID]
	if !ok {
		c = make(chan struct{})
		l.ended[turnID] = c
	}
	return c
}

func (l *lateStart) Start(ctx context.Context, spec agent.SessionSpec, sink agent.Sink) (agent.Session, error) {
	s, err := l.Runtime.Start(ctx, spec, lateSink{sink, l})
	if err != nil {
		return nil, err
	}
	return lateSession{s, l}, nil
}

type lateSink struct {
	agent.Sink
	l *lateStart
}

func (s lateSink) TurnEnded(te agent.TurnEnd) {
	s.Sink.TurnEnded(te)
	close(s.l.done(te.TurnID))
}

type lateSession struct {
	agent.Session
	l *lateStart
}

func (s lateSession) StartTurn(ctx context.Context, input string) (string, error) {
	id, err := s.Session.StartTurn(ctx, input)
	if err != nil {
		return "", err
	}
	select {
	case <-s.l.done(id):
	case <-ctx.Done():
		return "", ctx.Err()
	}
	return id, nil
}

// TestTurnEndsBeforeItsStartReturns: a turn the runtime ends before
// StartTurn has returned its id is still counted, started before its
// items and its end, and a queued follow-up still runs as a second turn.
func TestTurnEndsBeforeItsStartReturns(t *testing.T) {
	e := newEnv(t, func(o *agent.Options) {
		o.Runtimes["late"] = func() (agent.Runtime, error) {
			rt, err := fake()()
			return &lateStart{Runtime: rt, ended: map[string]chan struct{}{}}, err
		}
		o.Allowed = append(o.Allowed, "late")
	})
	c := e.direct()
	tests := []struct {
		name, prompt, followUp string
		turns                  float64
		result                 string
	}{
		{"one turn", "say quick\nresult one", "", 1, "one"},
		{"a follow-up", "say first\nsleep 60000", "say second\nresult two", 2, "two"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			id := must(t, c, "submit_agent_task", map[string]any{"runtime": "late", "workdir": "b", "prompt": tt.prompt})["task_id"].(string)
			if tt.followUp != "" {
				waitForEvent(t, c, id, "first")
				must(t, c, "send_agent_message", map[string]any{"task_id": id, "text": tt.followUp, "mode": "follow_up"})
				must(t, c, "send_agent_message", map[string]any{"task_id": id, "text": "finish"})
			}
			task := waitFor(t, c, id, "the end", func(m map[string]any) bool { return m["terminal"] == true })
			if task["status"] != "completed" || task["turns"].(float64) != tt.turns {
				t.Fatalf("task: %v", task)
			}
			if res := must(t, c, "read_agent_task_result", map[string]any{"task_id": id}); res["text"] != tt.result {
				t.Fatalf("result: %v", res)
			}
			started := map[string]bool{}
			for _, ev := range allEvents(t, c, id, 500) {
				turn, _ := ev["turn_id"].(string)
				switch typ := ev["type"].(string); {
				case typ == "turn.started":
					if started[turn] {
						t.Fatalf("turn %s started twice", turn)
					}
					started[turn] = true
				case turn != "" && !started[turn]:
					t.Fatalf("%s of turn %s before its turn.started", typ, turn)
				}
			}
			if len(started) != int(tt.turns) {
				t.Fatalf("turn.started for %d turns, want %v", len(started), tt.turns)
			}
		})
	}
}
