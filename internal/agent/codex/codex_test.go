package codex_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/agent"
	"github.com/hostlink/hostlink/internal/agent/agenttest"
	"github.com/hostlink/hostlink/internal/agent/codex"
	"github.com/hostlink/hostlink/internal/agent/fakemodel"
	"github.com/hostlink/hostlink/internal/sandbox"
	"github.com/hostlink/hostlink/internal/tstest"
)

// script is the fake model's side of every test below, chosen by the
// first word of the task's prompt.
func script(r *fakemodel.Request) fakemodel.Reply {
	user := r.LastUser()
	results := r.Results()
	switch {
	case strings.Contains(user, "plain:"):
		return fakemodel.Reply{Text: "plain answer " + strings.TrimSpace(strings.SplitN(user, "plain:", 2)[1])}
	case strings.Contains(user, "cmd:"):
		if len(results) > 0 {
			if os.Getenv("HOSTLINK_TEST_VERBOSE") != "" {
				fmt.Fprintf(os.Stderr, "RESULTS %+v\n", results)
			}
			return fakemodel.Reply{Text: "command finished"}
		}
		return fakemodel.Reply{Calls: []fakemodel.Call{{Name: "exec_command", Args: map[string]any{
			"cmd": "echo ran > ran.txt", "login": false, "sandbox_permissions": "require_escalated", "justification": "the test asks for it"}}}}
	case strings.Contains(user, "escape:"):
		if len(results) > 0 {
			return fakemodel.Reply{Text: "escape finished"}
		}
		target := strings.TrimSpace(strings.SplitN(user, "escape:", 2)[1])
		return fakemodel.Reply{Calls: []fakemodel.Call{{Name: "exec_command", Args: map[string]any{
			"cmd": "echo x > " + target, "login": false, "sandbox_permissions": "require_escalated", "justification": "the test asks for it"}}}}
	case strings.Contains(user, "patch:"):
		if len(results) > 0 {
			return fakemodel.Reply{Text: "patch finished"}
		}
		return fakemodel.Reply{Calls: []fakemodel.Call{{Name: "apply_patch",
			Input: "*** Begin Patch\n*** Add File: ../patched.txt\n+patched\n*** End Patch\n"}}}
	case r.UserSaid("steer:"):
		if r.UserSaid("STEERED") {
			return fakemodel.Reply{Text: "steered ok"}
		}
		return fakemodel.Reply{Text: strings.Repeat("working ", 40), Chunks: 40, Delay: 250 * time.Millisecond}
	case strings.Contains(user, "slow:"):
		return fakemodel.Reply{Text: strings.Repeat("slow ", 120), Chunks: 120, Delay: time.Second}
	case r.UserSaid("ask:"):
		if len(results) > 0 {
			return fakemodel.Reply{Text: "the answer was: " + results[len(results)-1].Text}
		}
		return fakemodel.Reply{Calls: []fakemodel.Call{{Name: "request_user_input", Args: map[string]any{"questions": []any{map[string]any{
			"id": "colour", "header": "Colour", "question": "Which colour?",
			"options": []any{map[string]any{"label": "red", "description": "warm"}, map[string]any{"label": "blue", "description": "cold"}}}}}}}}
	case strings.Contains(user, "big:"):
		return fakemodel.Reply{Text: agenttest.BigText}
	case strings.Contains(user, "remember:"):
		return fakemodel.Reply{Text: "noted"}
	case strings.Contains(user, "recall"):
		if r.UserSaid("PINEAPPLE") {
			return fakemodel.Reply{Text: "you said PINEAPPLE"}
		}
		return fakemodel.Reply{Text: "no history"}
	}
	return fakemodel.Reply{Text: "ok"}
}

// codexHome writes a CODEX_HOME whose model provider is the server at url,
// with no retries and no temporary directories as writable roots.
func codexHome(t *testing.T, url string) string {
	home := t.TempDir()
	cfg := fmt.Sprintf(`model = "gpt-5.5"
model_provider = "mock"

[features]
remote_models = false

[sandbox_workspace_write]
exclude_tmpdir_env_var = true
exclude_slash_tmp = true

[model_providers.mock]
name = "mock"
base_url = "%s/v1"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
`, url)
	if err := os.WriteFile(filepath.Join(home, "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return home
}

func factory(t *testing.T, clis, home string) agent.Factory {
	return sandboxedFactory(t, clis, home, nil)
}

// sandboxedFactory is factory with the app-server confined by *sb (nil:
// not), read when the runtime is first used.
func sandboxedFactory(t *testing.T, clis, home string, sb **sandbox.Policy) agent.Factory {
	return func() (agent.Runtime, error) {
		rt := &codex.Runtime{Path: clis, Env: map[string]string{"CODEX_HOME": home}, Stderr: agenttest.Stderr(t, "codex")}
		if sb != nil {
			rt.Sandbox = *sb
		}
		t.Cleanup(func() { rt.Close() })
		return rt, nil
	}
}

func TestCodex(t *testing.T) {
	t.Parallel()
	testCodex(t, false)
}

// TestCodexSandboxed runs the same tasks with the app-server inside
// hostlink's sandbox (workspace-write workdir writable, network on), as
// the daemon starts it: Codex's own sandbox still works nested in it, and
// a command Codex runs unsandboxed after an approval is still confined.
func TestCodexSandboxed(t *testing.T) {
	t.Parallel()
	if st := sandbox.Probe(); st.Mode != sandbox.Workdir {
		tstest.Missing(t, "commands cannot be sandboxed here: "+st.Reason)
	}
	testCodex(t, true)
}

func testCodex(t *testing.T, sandboxed bool) {
	clis := agenttest.CLIs(t)
	model := fakemodel.Responses(t, script)
	var sb *sandbox.Policy
	e := agenttest.New(t, map[string]agent.Factory{"codex": sandboxedFactory(t, clis, codexHome(t, model.URL), &sb)})
	if sandboxed {
		state := filepath.Join(e.Base, "state")
		sb = &sandbox.Policy{Mode: sandbox.Workdir, Writable: []string{e.Workdir}, Protected: []string{state}, TmpRoot: filepath.Join(state, "sandbox")}
	}
	os.MkdirAll(filepath.Join(e.Workdir, "sub"), 0o755)
	// Unsandboxed, the approved command writes outside the workdir, so
	// the sandboxed run's refusal is the sandbox's doing.
	t.Run("escalated command outside the workdir", func(t *testing.T) {
		{
			e := e.With(t)
			outside := filepath.Join(e.Base, "escaped.txt")
			id := e.Submit("codex", "escape: "+outside, "workspace-write", nil)
			p := e.Pending(id, "approval")
			var decision any
			for _, d := range p["decisions"].([]any) {
				if v := d.(map[string]any)["value"]; v == "accept" {
					decision = v
				}
			}
			if decision == nil {
				t.Fatalf("no accept decision: %v", p)
			}
			e.Must("respond_agent_approval", map[string]any{"task_id": id, "request_id": p["request_id"], "decision": decision})
			e.End(id, 2*time.Minute)
			if _, err := os.Stat(outside); (err == nil) == sandboxed {
				t.Fatalf("sandboxed %v: the approved command wrote outside the workdir: %v\n%s", sandboxed, err == nil, e.Dump(id))
			}
		}
	})

	t.Run("readiness", func(t *testing.T) {
		e := e.With(t)
		// Ready with the configured provider, which needs no login,
		// although `codex login status` says there is none.
		if rt := e.Runtime(); rt["installed"] != true || rt["version"] != codex.TestedVersion || rt["ready"] != true ||
			rt["provider"] != "mock" || rt["reason"] != nil {
			t.Fatalf("runtime: %v", rt)
		}
		e.WantModels("codex")
	})
	t.Run("plain", func(t *testing.T) {
		e := e.With(t)
		id := e.Submit("codex", "plain: hello there", "read-only", nil)
		if got := e.Completed(id); got != "plain answer hello there" {
			t.Fatalf("result %q", got)
		}
		task := e.Must("get_agent_task", map[string]any{"task_id": id})
		if !strings.HasPrefix(task["turn_id"].(string), "") || task["session_id"] == "" {
			t.Fatalf("task: %v", task)
		}
	})
	// Codex 0.171 offers accept, an object-shaped execpolicy amendment and
	// cancel for a command: the acceptance is the object, passed back as
	// offered; the refusal is cancel, which ends the task cancelled.
	for _, accept := range []bool{false, true} {
		t.Run(fmt.Sprintf("command accepted=%v", accept), func(t *testing.T) {
			e := e.With(t)
			os.Remove(filepath.Join(e.Workdir, "ran.txt"))
			id := e.Submit("codex", "cmd: run it", "workspace-write", nil)
			p := e.Pending(id, "approval")
			if !strings.Contains(p["summary"].(string), "echo ran") {
				t.Fatalf("approval: %v", p)
			}
			var decision any
			for _, d := range p["decisions"].([]any) {
				v := d.(map[string]any)["value"]
				if _, isObject := v.(map[string]any); accept && isObject || !accept && (v == "decline" || v == "cancel" && decision == nil) {
					decision = v
				}
			}
			if decision == nil {
				t.Fatalf("no decision to choose: %v", p)
			}
			e.Must("respond_agent_approval", map[string]any{"task_id": id, "request_id": p["request_id"], "decision": decision})
			task := e.End(id, 2*time.Minute)
			switch {
			case accept && task["status"] == "completed":
				if got := e.Result(id); got != "command finished" {
					t.Fatalf("result %q", got)
				}
			case !accept && (decision == "cancel" && task["status"] == "cancelled" || decision != "cancel" && task["status"] == "completed"):
			default:
				t.Fatalf("decision %v: task %v\n%s", decision, task, e.Dump(id))
			}
			e.WantFile(id, "ran.txt", accept)
		})
	}
	t.Run("file change cancelled", func(t *testing.T) {
		e.With(t).RunApprovalCancel("codex", agenttest.Approval{Prompt: "patch: write it", Extra: map[string]any{"cwd": "sub"},
			Asks: "change files", File: "patched.txt"})
	})
	t.Run("long lines", func(t *testing.T) {
		e := e.With(t)
		id := e.Submit("codex", "big: please", "read-only", nil)
		if got := e.Completed(id); got != agenttest.BigText {
			t.Fatalf("result of %d bytes, want %d", len(got), len(agenttest.BigText))
		}
	})
	for _, accept := range []bool{true, false} {
		t.Run(fmt.Sprintf("file change accepted=%v", accept), func(t *testing.T) {
			e.With(t).RunApproval("codex", agenttest.Approval{Prompt: "patch: write it", Extra: map[string]any{"cwd": "sub"},
				Asks: "change files", Result: "patch finished", File: "patched.txt"}, accept)
		})
	}
	t.Run("read-only writes nothing and asks nothing", func(t *testing.T) {
		e := e.With(t)
		os.Remove(filepath.Join(e.Workdir, "patched.txt"))
		id := e.Submit("codex", "patch: write it", "read-only", map[string]any{"cwd": "sub"})
		if got := e.Completed(id); got != "patch finished" {
			t.Fatalf("result %q", got)
		}
		e.WantFile(id, "patched.txt", false)
		if e.HasEvent(id, "approval.requested") {
			t.Fatalf("a read-only task asked for approval:\n%s", e.Dump(id))
		}
	})
	t.Run("steer", func(t *testing.T) {
		e := e.With(t)
		id := e.Submit("codex", "steer: work", "read-only", nil)
		e.WaitDelta(id)
		e.Must("send_agent_message", map[string]any{"task_id": id, "text": "STEERED", "mode": "steer"})
		if got := e.Completed(id); !strings.Contains(got, "steered ok") {
			t.Fatalf("result %q", got)
		}
	})
	t.Run("cancel", func(t *testing.T) {
		e := e.With(t)
		e.Cancel(e.Submit("codex", "slow: go", "workspace-write", nil))
	})
}

// TestCodexRestart: a thread outlives hostlink. After a restart (a new
// engine and a new app-server) thread/read proves how its last turn ended,
// and a task continuing the thread sees its history.
func TestCodexRestart(t *testing.T) {
	t.Parallel()
	clis := agenttest.CLIs(t)
	model := fakemodel.Responses(t, script)
	home := codexHome(t, model.URL)
	var old *codex.Runtime
	e := agenttest.New(t, map[string]agent.Factory{"codex": func() (agent.Runtime, error) {
		rt, err := factory(t, clis, home)()
		if old == nil {
			old = rt.(*codex.Runtime)
		}
		return rt, err
	}})
	first := e.Submit("codex", "remember: PINEAPPLE", "read-only", nil)
	if got := e.Completed(first); got != "noted" {
		t.Fatalf("result %q", got)
	}
	task := e.Must("get_agent_task", map[string]any{"task_id": first})
	// hostlink's app-server ends with it.
	e.Restart()
	old.Close()

	rt, _ := factory(t, clis, home)()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	sess, st, err := rt.Resume(ctx, agent.SessionSpec{Dir: e.Workdir, Access: agent.ReadOnly}, task["session_id"].(string), discard{})
	if err != nil {
		t.Fatal(err)
	}
	sess.Close()
	// Closed, the thread is unloaded: the same app-server resumes it again.
	sess, _, err = rt.Resume(ctx, agent.SessionSpec{Dir: e.Workdir, Access: agent.ReadOnly}, task["session_id"].(string), discard{})
	if err != nil {
		t.Fatalf("second resume in one app-server: %v", err)
	}
	sess.Close()
	rt.(*codex.Runtime).Close()
	if !st.Known || st.Status != agent.TurnCompleted || st.TurnID != task["turn_id"] || st.Result != "noted" {
		t.Fatalf("reconciled %+v, task %v", st, task)
	}

	next := e.Submit("codex", "recall", "read-only", map[string]any{"continue_task_id": first})
	if got := e.Completed(next); got != "you said PINEAPPLE" {
		t.Fatalf("result %q", got)
	}
	if got := e.Must("get_agent_task", map[string]any{"task_id": next})["session_id"]; got != task["session_id"] {
		t.Fatalf("session %v, want %v", got, task["session_id"])
	}
}

// TestCodexUnreachableModel: Codex retries an unreachable model without
// end; the turn ends at hostlink's turn deadline, interrupted.
func TestCodexUnreachableModel(t *testing.T) {
	t.Parallel()
	clis := agenttest.CLIs(t)
	e := agenttest.New(t, map[string]agent.Factory{"codex": factory(t, clis, codexHome(t, agenttest.UnreachableURL(t)))},
		func(o *agent.Options) { o.Limits.TurnTimeout = 5 * time.Second })
	e.WantTurnTimeout("codex", "plain: anyone there?")
}

type discard struct{}

func (discard) Item(agent.Item)         {}
func (discard) Request(agent.Request)   {}
func (discard) Withdraw(string)         {}
func (discard) TurnEnded(agent.TurnEnd) {}
func (discard) Exited(error)            {}

// TestCodexQuestion: in plan mode Codex relays the model's questions
// (request_user_input); the answer reaches the model as the tool's output.
func TestCodexQuestion(t *testing.T) {
	t.Parallel()
	clis := agenttest.CLIs(t)
	model := fakemodel.Responses(t, script)
	home := codexHome(t, model.URL)
	e := agenttest.New(t, map[string]agent.Factory{"codex": func() (agent.Runtime, error) {
		rt, err := factory(t, clis, home)()
		rt.(*codex.Runtime).CollaborationMode = "plan"
		return rt, err
	}})
	id := e.Submit("codex", "ask: something", "read-only", nil)
	p := e.Pending(id, "question")
	q := p["questions"].([]any)[0].(map[string]any)
	if q["id"] != "colour" || q["text"] != "Which colour?" || len(q["options"].([]any)) != 2 {
		t.Fatalf("question: %v", p)
	}
	e.Must("answer_agent_question", map[string]any{"task_id": id, "request_id": p["request_id"],
		"answers": map[string]any{"colour": []string{"blue"}}})
	if got := e.Completed(id); !strings.Contains(got, "blue") {
		t.Fatalf("result %q\n%s", got, e.Dump(id))
	}
}

// TestCodexProviderNeedsKey: a configured provider whose API key variable
// (env_key) is unset makes Codex not ready, saying which variable, and a
// task for it is refused at submit with RUNTIME_NOT_READY.
func TestCodexProviderNeedsKey(t *testing.T) {
	t.Parallel()
	clis := agenttest.CLIs(t)
	home := codexHome(t, agenttest.UnreachableURL(t))
	cfg, _ := os.ReadFile(filepath.Join(home, "config.toml"))
	os.WriteFile(filepath.Join(home, "config.toml"), append(cfg, "env_key = \"HOSTLINK_TEST_MOCK_KEY\"\n"...), 0o600)
	e := agenttest.New(t, map[string]agent.Factory{"codex": factory(t, clis, home)})
	rt := e.Runtime()
	if rt["ready"] != false || rt["authenticated"] != false || !strings.Contains(rt["reason"].(string), "HOSTLINK_TEST_MOCK_KEY") {
		t.Fatalf("runtime: %v", rt)
	}
	if _, code := e.Call("submit_agent_task", map[string]any{"runtime": "codex", "workdir": "w", "prompt": "plain: x"}); code != agent.CodeRuntimeNotReady {
		t.Fatalf("submit: %q", code)
	}
}
