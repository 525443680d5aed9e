package runtimes_test

import (
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/agent"
	"github.com/hostlink/hostlink/internal/agent/agenttest"
	"github.com/hostlink/hostlink/internal/agent/claude"
	"github.com/hostlink/hostlink/internal/agent/fakemodel"
	"github.com/hostlink/hostlink/internal/agent/runtimes"
)

// TestMissingRuntimes: with Codex and Qoder absent, list_agent_runtimes
// reports them not installed, and Claude still runs a task.
func TestMissingRuntimes(t *testing.T) {
	t.Parallel()
	clis := agenttest.CLIs(t)
	empty := t.TempDir()
	f := runtimes.Factories(runtimes.Paths{Codex: empty, Claude: clis, Qoder: empty})
	model := fakemodel.Messages(t, func(*fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Text: "still here"} })
	home, config := t.TempDir(), t.TempDir()
	f[claude.Name] = func() (agent.Runtime, error) {
		return &claude.Runtime{Path: clis, Env: map[string]string{"HOME": home, "CLAUDE_CONFIG_DIR": config,
			"ANTHROPIC_BASE_URL": model.URL, "ANTHROPIC_API_KEY": "test-key", "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1"}}, nil
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
	if r := got["claude"]; r["installed"] != true || r["version"] != claude.TestedVersion {
		t.Errorf("claude: %v", r)
	}
	if _, code := e.Call("list_agent_models", map[string]any{"runtime": "codex"}); code == "" {
		t.Error("models of a missing runtime: no error")
	}
	id := e.Submit("claude", "hello", "read-only", nil)
	if res := e.Completed(id); res != "still here" {
		t.Fatalf("result %q", res)
	}
	id = e.Submit("codex", "hello", "read-only", nil)
	if task := e.End(id, time.Minute); task["status"] != "failed" {
		t.Fatalf("task on a missing runtime: %v", task)
	}
}
