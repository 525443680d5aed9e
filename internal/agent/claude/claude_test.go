package claude_test

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/agent"
	"github.com/hostlink/hostlink/internal/agent/agenttest"
	"github.com/hostlink/hostlink/internal/agent/claude"
	"github.com/hostlink/hostlink/internal/agent/fakemodel"
)

// script is the fake model's side of the tests, chosen by what the user
// said in the session.
func script(r *fakemodel.Request) fakemodel.Reply {
	results := r.Results()
	var lastResult string
	if len(results) > 0 {
		lastResult = results[len(results)-1].Text
	}
	switch {
	case r.UserSaid("recall"):
		if r.UserSaid("PINEAPPLE") {
			return fakemodel.Reply{Text: "you said PINEAPPLE"}
		}
		return fakemodel.Reply{Text: "no history"}
	case r.UserSaid("remember:"):
		return fakemodel.Reply{Text: "noted"}
	case r.UserSaid("plain:"):
		return fakemodel.Reply{Text: "plain answer"}
	case r.UserSaid("big:"):
		return fakemodel.Reply{Text: agenttest.BigText}
	case r.UserSaid("cmd:"):
		if len(results) > 0 {
			return fakemodel.Reply{Text: "command finished"}
		}
		return fakemodel.Reply{Calls: []fakemodel.Call{{Name: "Bash", Args: map[string]any{"command": "echo ran > ran.txt", "description": "write ran.txt"}}}}
	case r.UserSaid("write:"):
		if len(results) > 0 {
			return fakemodel.Reply{Text: "write finished"}
		}
		path := strings.TrimSpace(strings.SplitN(userText(r, "write:"), "write:", 2)[1])
		return fakemodel.Reply{Calls: []fakemodel.Call{{Name: "Write", Args: map[string]any{"file_path": path, "content": "written\n"}}}}
	case r.UserSaid("ask:"):
		if len(results) > 0 {
			return fakemodel.Reply{Text: "the answer was: " + lastResult}
		}
		return fakemodel.Reply{Calls: []fakemodel.Call{{Name: "AskUserQuestion", Args: map[string]any{"questions": []any{map[string]any{
			"question": "Which colour?", "header": "Colour", "multiSelect": false,
			"options": []any{map[string]any{"label": "red", "description": "warm"}, map[string]any{"label": "blue", "description": "cold"}}}}}}}}
	case r.UserSaid("steer:"):
		if r.UserSaid("STEERED") {
			return fakemodel.Reply{Text: "steered ok"}
		}
		return fakemodel.Reply{Text: strings.Repeat("working ", 120), Chunks: 120, Delay: 500 * time.Millisecond}
	case r.UserSaid("slow:"):
		return fakemodel.Reply{Text: strings.Repeat("slow ", 120), Chunks: 120, Delay: time.Second}
	}
	return fakemodel.Reply{Text: "ok"}
}

func userText(r *fakemodel.Request, has string) string {
	for _, e := range r.Conversation {
		if e.Role == "user" && strings.Contains(e.Text, has) {
			return e.Text
		}
	}
	return ""
}

// factory runs claude against the fake model at url, with a throwaway
// config directory and HOME (so no login shell profile of this machine's
// runs in its Bash tool).
func factory(t *testing.T, clis, url, config string) agent.Factory {
	home := t.TempDir()
	return func() (agent.Runtime, error) {
		rt := &claude.Runtime{Path: clis, Env: map[string]string{"HOME": home,
			"ANTHROPIC_BASE_URL": url, "ANTHROPIC_API_KEY": "test-key", "CLAUDE_CONFIG_DIR": config,
			"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_AUTOUPDATER": "1",
		}}
		rt.Stderr = agenttest.Stderr(t, "claude")
		return rt, nil
	}
}

func TestClaude(t *testing.T) {
	t.Parallel()
	clis := agenttest.CLIs(t)
	model := fakemodel.Messages(t, script)
	e := agenttest.New(t, map[string]agent.Factory{"claude": factory(t, clis, model.URL, t.TempDir())})

	t.Run("readiness", func(t *testing.T) {
		e := e.With(t)
		rt := e.Runtime()
		if rt["installed"] != true || rt["version"] != claude.TestedVersion || rt["authenticated"] != true {
			t.Fatalf("runtime: %v", rt)
		}
		e.WantModels("claude")
	})
	t.Run("plain", func(t *testing.T) {
		e := e.With(t)
		id := e.Submit("claude", "plain: hello", "read-only", nil)
		if got := e.Completed(id); got != "plain answer" {
			t.Fatalf("result %q", got)
		}
	})
	t.Run("long lines", func(t *testing.T) {
		e := e.With(t)
		id := e.Submit("claude", "big: please", "read-only", nil)
		if got := e.Completed(id); got != agenttest.BigText {
			t.Fatalf("result of %d bytes, want %d", len(got), len(agenttest.BigText))
		}
	})
	approvals := []struct {
		name string
		agenttest.Approval
	}{
		{"command", agenttest.Approval{Prompt: "cmd: run it", Asks: "echo ran", Result: "command finished", File: "ran.txt"}},
		{"file change", agenttest.Approval{Prompt: "write: " + filepath.Join(e.Workdir, "written.txt"), Asks: "Write",
			Result: "write finished", File: "written.txt"}},
	}
	for _, a := range approvals {
		for _, accept := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s accepted=%v", a.name, accept), func(t *testing.T) {
				e.With(t).RunApproval("claude", a.Approval, accept)
			})
		}
		// Claude aborts the turn (error_during_execution): cancelled.
		t.Run(a.name+" cancelled", func(t *testing.T) {
			e.With(t).RunApprovalCancel("claude", a.Approval)
		})
	}
	t.Run("read-only has no file tools", func(t *testing.T) {
		e := e.With(t)
		path := filepath.Join(e.Workdir, "written.txt")
		os.Remove(path)
		id := e.Submit("claude", "write: "+path, "read-only", nil)
		if got := e.Completed(id); got != "write finished" {
			t.Fatalf("result %q", got)
		}
		e.WantFile(id, "written.txt", false)
		if e.HasEvent(id, "approval.requested") {
			t.Fatalf("a read-only task asked to write:\n%s", e.Dump(id))
		}
	})
	t.Run("question", func(t *testing.T) {
		e := e.With(t)
		id := e.Submit("claude", "ask: something", "read-only", nil)
		p := e.Pending(id, "question")
		q := p["questions"].([]any)[0].(map[string]any)
		if q["text"] != "Which colour?" {
			t.Fatalf("question: %v", p)
		}
		e.Must("answer_agent_question", map[string]any{"task_id": id, "request_id": p["request_id"],
			"answers": map[string]any{q["id"].(string): []string{"blue"}}})
		if got := e.Completed(id); !strings.Contains(got, "blue") {
			t.Fatalf("result %q", got)
		}
	})
	t.Run("steer", func(t *testing.T) {
		e := e.With(t)
		id := e.Submit("claude", "steer: work", "read-only", nil)
		e.WaitDelta(id)
		e.Must("send_agent_message", map[string]any{"task_id": id, "text": "STEERED", "mode": "steer"})
		if got := e.Completed(id); !strings.Contains(got, "steered ok") {
			t.Fatalf("result %q\n%s", got, e.Dump(id))
		}
	})
	t.Run("cancel", func(t *testing.T) {
		e := e.With(t)
		e.Cancel(e.Submit("claude", "slow: go", "workspace-write", nil))
	})
	t.Run("cancel withdraws a pending approval", func(t *testing.T) {
		e := e.With(t)
		os.Remove(filepath.Join(e.Workdir, "ran.txt"))
		id := e.Submit("claude", "cmd: run it", "workspace-write", nil)
		e.Pending(id, "approval")
		e.Must("cancel_agent_task", map[string]any{"task_id": id})
		if task := e.End(id, time.Minute); task["status"] != "cancelled" {
			t.Fatalf("task: %v", task)
		}
		if !e.HasEvent(id, "request.withdrawn") {
			t.Fatalf("not withdrawn:\n%s", e.Dump(id))
		}
		e.WantFile(id, "ran.txt", false)
	})
	t.Run("restart", func(t *testing.T) {
		e := e.With(t)
		first := e.Submit("claude", "remember: PINEAPPLE", "read-only", nil)
		if got := e.Completed(first); got != "noted" {
			t.Fatalf("result %q", got)
		}
		sid := e.Must("get_agent_task", map[string]any{"task_id": first})["session_id"]
		e.Restart()
		next := e.Submit("claude", "recall", "read-only", map[string]any{"continue_task_id": first})
		if got := e.Completed(next); got != "you said PINEAPPLE" {
			t.Fatalf("result %q", got)
		}
		if got := e.Must("get_agent_task", map[string]any{"task_id": next})["session_id"]; got != sid {
			t.Fatalf("session %v, want %v", got, sid)
		}
	})
}

// TestClaudeUnreachableModel: the turn ends at hostlink's turn deadline.
func TestClaudeUnreachableModel(t *testing.T) {
	t.Parallel()
	clis := agenttest.CLIs(t)
	e := agenttest.New(t, map[string]agent.Factory{"claude": factory(t, clis, agenttest.UnreachableURL(t), t.TempDir())},
		func(o *agent.Options) { o.Limits.TurnTimeout = 5 * time.Second })
	e.WantTurnTimeout("claude", "plain: anyone there?")
}
