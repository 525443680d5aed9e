package agent_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/agent"
	"github.com/hostlink/hostlink/internal/agentapi"
	"github.com/hostlink/hostlink/internal/errcode"
)

// TestRecoveryThroughTheRuntime seeds the state a hostlink killed mid-turn
// leaves (a running task of a dead owner, its runtime's session on disk)
// and opens the engine: the runtime's own record decides. A turn it
// completed becomes a completed task with its result; one it did not
// finish becomes interrupted with that reason; a task that never reached
// the runtime is interrupted too.
func TestRecoveryThroughTheRuntime(t *testing.T) {
	w := newWorld(t)
	st, err := agent.OpenStore(w.state)
	if err != nil {
		t.Fatal(err)
	}
	sessions := filepath.Join(w.state, "runtimes", "fake", "sessions")
	os.MkdirAll(sessions, 0o700)
	seed := func(id string, status agent.Status, session, turn, runtimeTurn, result string) {
		_, _, err := st.Create(agent.Task{ID: id, Created: time.Now(), Status: agent.Queued, Runtime: "fake", Workdir: "b", Cwd: ".",
			Access: agent.ReadOnly, RequestSHA256: id, Manifest: []byte("{}"), ManifestSHA256: "m", PolicyFingerprint: "p",
			Owner: "eng_dead"}, []agentapi.Event{{Type: "task.queued"}})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range []agent.Status{agent.Starting, agent.Running} {
			if s == agent.Running && status == agent.Starting {
				break
			}
			if _, _, err := st.Apply(id, time.Now(), agent.Change{To: s, SessionID: session, TurnID: turn}); err != nil {
				t.Fatal(err)
			}
		}
		if session != "" {
			b, _ := json.Marshal(map[string]any{"id": session, "cwd": w.dirs["b"], "access": "read-only",
				"turns": []map[string]any{{"turn_id": turn, "status": runtimeTurn, "result": result}}})
			os.WriteFile(filepath.Join(sessions, session+".json"), b, 0o600)
		}
	}
	seed("task_done", agent.Running, "fs_1", "ft_1", "completed", "the answer")
	seed("task_cut", agent.Running, "fs_2", "ft_2", "running", "")
	seed("task_early", agent.Starting, "", "", "", "")
	st.Close()

	e := newEnvAt(t, w)
	c := e.direct()
	done := must(t, c, "get_agent_task", map[string]any{"task_id": "task_done"})
	if done["status"] != "completed" || !strings.Contains(done["reason"].(string), "had completed") {
		t.Fatalf("a turn the runtime completed: %v", done)
	}
	if res := must(t, c, "read_agent_task_result", map[string]any{"task_id": "task_done"}); res["text"] != "the answer" {
		t.Fatalf("its result: %v", res)
	}
	cut := must(t, c, "get_agent_task", map[string]any{"task_id": "task_cut"})
	if cut["status"] != "interrupted" || !strings.Contains(cut["reason"].(string), "recorded the turn as interrupted") {
		t.Fatalf("a turn the runtime did not finish: %v", cut)
	}
	early := must(t, c, "get_agent_task", map[string]any{"task_id": "task_early"})
	if early["status"] != "interrupted" || !strings.Contains(early["reason"].(string), "starting") {
		t.Fatalf("a task that never reached its runtime: %v", early)
	}
	evs := allEvents(t, c, "task_cut", 100)
	if last := evs[len(evs)-1]; last["type"] != "task.reconciled" {
		t.Fatalf("last event of a reconciled task: %v", last)
	}
	if _, code := c("respond_agent_approval", map[string]any{"task_id": "task_cut", "request_id": "req_x", "decision": "accept"}); code != agent.CodeInvalidState {
		t.Fatalf("answering for a reconciled task: %q", code)
	}
}

func TestTurnTimeout(t *testing.T) {
	e := newEnv(t, func(o *agent.Options) { o.Limits.TurnTimeout = 300 * time.Millisecond })
	c := e.direct()
	id := must(t, c, "submit_agent_task", map[string]any{"runtime": "fake", "workdir": "b", "prompt": "sleep 60000"})["task_id"].(string)
	task := waitFor(t, c, id, "the end", func(m map[string]any) bool { return m["terminal"] == true })
	if task["status"] != "failed" || !strings.Contains(task["reason"].(string), "turn_timeout_seconds") {
		t.Fatalf("a turn past its deadline: %v", task)
	}
}

func TestConcurrencyLimit(t *testing.T) {
	e := newEnv(t, func(o *agent.Options) { o.Limits.MaxConcurrent = 1 })
	c := e.direct()
	args := map[string]any{"runtime": "fake", "workdir": "b", "prompt": "sleep 60000", "idempotency_key": "one"}
	id := must(t, c, "submit_agent_task", args)["task_id"].(string)
	if _, code := c("submit_agent_task", map[string]any{"runtime": "fake", "workdir": "b", "prompt": "say hi"}); code != agent.CodeTooManyTasks {
		t.Fatalf("a task over the limit: %q", code)
	}
	// A resubmission is not a new task, so the limit does not apply.
	if again := must(t, c, "submit_agent_task", args); again["task_id"] != id {
		t.Fatalf("resubmission: %v", again)
	}
	must(t, c, "cancel_agent_task", map[string]any{"task_id": id})
	waitFor(t, c, id, "the end", func(m map[string]any) bool { return m["terminal"] == true })
	if _, code := c("submit_agent_task", map[string]any{"runtime": "fake", "workdir": "b", "prompt": "say hi"}); code != errcode.Code("") {
		t.Fatalf("a task once the first ended: %q", code)
	}
}
