package runtimes_test

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/agent"
	"github.com/hostlink/hostlink/internal/agent/agenttest"
	"github.com/hostlink/hostlink/internal/agent/claude"
	"github.com/hostlink/hostlink/internal/agent/runtimes"
	"github.com/hostlink/hostlink/internal/agentapi"
	"github.com/hostlink/hostlink/internal/errcode"
)

// TestMissingRuntimes: with Codex and Qoder absent, list_agent_runtimes
// reports them not installed, a task for them is refused at submit (and
// fails to start if queued anyway), while Claude (the stub, in its npm
// layout) still runs a task.
func TestMissingRuntimes(t *testing.T) {
	empty := t.TempDir()
	f := runtimes.Factories(runtimes.Paths{Codex: empty, Claude: stubLayout(t, "claude"), Qoder: empty})
	base := f[claude.Name]
	f[claude.Name] = func() (agent.Runtime, error) {
		rt, err := base()
		rt.(*claude.Runtime).Env = map[string]string{stubEnv: "1", "GORACE": "atexit_sleep_ms=0"}
		return rt, err
	}
	e := agenttest.New(t, f)
	got := map[string]map[string]any{}
	for _, r := range e.Must("list_agent_runtimes", nil)["runtimes"].([]any) {
		got[r.(map[string]any)["name"].(string)] = r.(map[string]any)
	}
	for _, n := range []string{"codex", "qoder"} {
		if r := got[n]; r["installed"] != false || r["ready"] != false || !strings.Contains(r["reason"].(string), "not installed") {
			t.Errorf("%s: %v", n, r)
		}
	}
	if r := got["claude"]; r["installed"] != true || r["ready"] != true || r["version"] != claude.TestedVersion {
		t.Errorf("claude: %v", r)
	}
	// One condition, one code: a missing runtime's models are refused
	// as its tasks are.
	for _, n := range []string{"codex", "qoder"} {
		if _, code := e.Call("list_agent_models", map[string]any{"runtime": n}); code != agent.CodeRuntimeNotReady {
			t.Errorf("models of missing %s: %q, want %s", n, code, agent.CodeRuntimeNotReady)
		}
	}
	id := e.Submit("claude", "hello", "read-only", nil)
	p := e.Pending(id, "approval")
	e.Must("respond_agent_approval", map[string]any{"task_id": id, "request_id": p["request_id"], "decision": "decline"})
	if res := e.Completed(id); !strings.HasPrefix(res, "behavior deny ") {
		t.Fatalf("result %.100q", res)
	}
	// A missing runtime is refused at submit, with the readiness reason;
	// queued anyway, its task fails to start, saying why.
	_, _, err := e.Eng.Submit(context.Background(), agentapi.SubmitArgs{Runtime: "codex", Workdir: "w", Prompt: "hello"})
	if ec := errcode.As(err); ec.Code != agent.CodeRuntimeNotReady || !strings.Contains(ec.Message, "not installed") {
		t.Fatalf("submit to a missing runtime: %v", err)
	}
	id = e.Submit("codex", "hello", "read-only", map[string]any{"queue_if_not_ready": true})
	if task := e.End(id, time.Minute); task["status"] != "failed" || !strings.Contains(task["reason"].(string), "not installed") {
		t.Fatalf("task on a missing runtime: %v", task)
	}
}
