package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/agent"
	"github.com/hostlink/hostlink/internal/agent/fakeruntime"
	"github.com/hostlink/hostlink/internal/agentapi"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/tstest"
)

// fakeWith is the fake runtime with env added to its environment; env is
// read at each start, so a test may change it between starts.
func fakeWith(env map[string]string) agent.Factory {
	return func() (agent.Runtime, error) {
		for k, v := range map[string]string{"HOSTLINK_FAKE_AGENT": "1", "GORACE": "atexit_sleep_ms=0"} {
			env[k] = v
		}
		return &fakeruntime.Runtime{Argv: []string{os.Args[0]}, Env: env}, nil
	}
}

func withRuntime(f agent.Factory) func(*agent.Options) {
	return func(o *agent.Options) { o.Runtimes = map[string]agent.Factory{"fake": f} }
}

// statusEvents are the task's state changes to a terminal state.
func terminalEvents(t testing.TB, c caller, id string) []map[string]any {
	var out []map[string]any
	for _, ev := range allEvents(t, c, id, 500) {
		if ev["type"] != "task.status" {
			continue
		}
		to := ev["data"].(map[string]any)["to"].(string)
		if s := agent.Status(to); s.Terminal() {
			out = append(out, ev)
		}
	}
	return out
}

// TestCancelDecisionCancels: answering an approval with cancel ends the
// task cancelled, whatever the runtime does with the answer: here it goes
// on, as Qoder does (the fake takes the decision and carries on), and
// either is interrupted or finishes its turn before the interrupt comes.
func TestCancelDecisionCancels(t *testing.T) {
	for _, tc := range []struct{ name, prompt string }{
		{"runtime goes on", "approve make\nsay after\nsleep 30000\nresult r"},
		{"runtime completes at once", "approve make\nresult r"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			c := e.direct()
			id := must(t, c, "submit_agent_task", map[string]any{"runtime": "fake", "workdir": "a", "prompt": tc.prompt})["task_id"].(string)
			task := waitFor(t, c, id, "the approval", pendingKind("approval"))
			rid := task["pending"].([]any)[0].(map[string]any)["request_id"]
			must(t, c, "respond_agent_approval", map[string]any{"task_id": id, "request_id": rid, "decision": "cancel"})
			got := waitFor(t, c, id, "the end", func(m map[string]any) bool { return m["terminal"] == true })
			if got["status"] != "cancelled" || !strings.Contains(got["reason"].(string), "approval") || got["result"] != nil {
				t.Fatalf("after cancel: %v", got)
			}
		})
	}
}

// TestSubmitRefusesNotReady: a runtime that is not installed, or is known
// not ready, is refused at submit with RUNTIME_NOT_READY and the
// readiness reason, unless the caller asks to queue anyway; a runtime
// that became ready since is not refused on an old verdict.
func TestSubmitRefusesNotReady(t *testing.T) {
	missing := func() (agent.Runtime, error) {
		return &fakeruntime.Runtime{Argv: []string{filepath.Join(t.TempDir(), "no-such-runtime")}}, nil
	}
	env := map[string]string{fakeruntime.LoggedOutEnv: "1"}
	for _, tc := range []struct {
		name    string
		factory agent.Factory
		reason  string
		queued  string // the status a task queued anyway reaches
	}{
		{"not installed", missing, "COMMAND_START_FAILED", "failed"},
		{"not logged in", fakeWith(env), "not logged in", "completed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t, withRuntime(tc.factory))
			args := agentapi.SubmitArgs{Runtime: "fake", Workdir: "a", Prompt: "result r"}
			_, _, err := e.eng.Submit(context.Background(), args)
			var ec *errcode.Error
			if !errorsAs(err, &ec) || ec.Code != agent.CodeRuntimeNotReady || ec.Details["readiness"] == nil {
				t.Fatalf("submit: %v", err)
			}
			if tc.reason != "COMMAND_START_FAILED" && !strings.Contains(ec.Message, tc.reason) {
				t.Fatalf("reason: %v", ec.Message)
			}
			c := e.direct()
			if _, code := c("submit_agent_task", map[string]any{"runtime": "fake", "workdir": "a", "prompt": "x"}); code != agent.CodeRuntimeNotReady {
				t.Fatalf("through the operation: %q", code)
			}
			id := must(t, c, "submit_agent_task", map[string]any{"runtime": "fake", "workdir": "a", "prompt": "result r",
				"queue_if_not_ready": true})["task_id"].(string)
			waitFor(t, c, id, tc.queued, statusIs(tc.queued))
		})
	}
	t.Run("logged in since", func(t *testing.T) {
		env := map[string]string{fakeruntime.LoggedOutEnv: "1"}
		e := newEnv(t, withRuntime(fakeWith(env)))
		c := e.direct()
		if _, code := c("submit_agent_task", map[string]any{"runtime": "fake", "workdir": "a", "prompt": "x"}); code != agent.CodeRuntimeNotReady {
			t.Fatalf("logged out: %q", code)
		}
		delete(env, fakeruntime.LoggedOutEnv) // read by the next start, not before

		id := must(t, c, "submit_agent_task", map[string]any{"runtime": "fake", "workdir": "a", "prompt": "result r"})["task_id"].(string)
		waitFor(t, c, id, "completed", statusIs("completed"))
	})
}

func errorsAs(err error, target **errcode.Error) bool {
	e, ok := err.(*errcode.Error)
	if ok {
		*target = e
	}
	return ok
}

// TestEventsRedacted: every event is stored redacted, the prompt of
// task.queued and the text of messages included: host paths outside the
// workdir become [host path], those inside it alias-relative.
func TestEventsRedacted(t *testing.T) {
	e := newEnv(t)
	c := e.direct()
	outside := filepath.Join(e.w.base, "secret", "plan.txt")
	inside := filepath.Join(e.w.dirs["a"], "src", "main.go")
	prompt := "look at " + outside + " and " + inside + "\nsay hi\nsleep 30000"
	id := must(t, c, "submit_agent_task", map[string]any{"runtime": "fake", "workdir": "a", "prompt": prompt})["task_id"].(string)
	waitFor(t, c, id, "running", statusIs("running"))
	tstest.WaitFor(t, 30*time.Second, "the turn", func() bool {
		turn, _ := must(t, c, "get_agent_task", map[string]any{"task_id": id})["turn_id"].(string)
		return turn != ""
	})
	// The fake ends its sleep on a steer; the follow-up turn sleeps again.
	must(t, c, "send_agent_message", map[string]any{"task_id": id, "text": "then " + outside + "\nsleep 30000", "mode": "follow_up"})
	must(t, c, "send_agent_message", map[string]any{"task_id": id, "text": "also " + outside, "mode": "steer"})
	waitFor(t, c, id, "the second turn", func(m map[string]any) bool { return m["turns"] == float64(2) })
	must(t, c, "cancel_agent_task", map[string]any{"task_id": id})
	waitFor(t, c, id, "cancelled", statusIs("cancelled"))
	evs := allEvents(t, c, id, 500)
	raw, _ := json.Marshal(evs)
	if strings.Contains(string(raw), e.w.base) || strings.Contains(string(raw), filepath.ToSlash(e.w.base)) {
		t.Fatalf("a host path in the events:\n%s", raw)
	}
	queued := evs[0]["data"].(map[string]any)
	if queued["prompt"] != "look at [host path] and a:src/main.go\nsay hi\nsleep 30000" ||
		queued["prompt_bytes"] != float64(len(prompt)) || len(queued["prompt_sha256"].(string)) != 64 {
		t.Fatalf("task.queued: %v", queued)
	}
	n := 0
	for _, ev := range evs {
		if ev["type"] == "message.steered" || ev["type"] == "message.queued" {
			n++
			if !strings.Contains(ev["data"].(map[string]any)["text"].(string), "[host path]") {
				t.Errorf("%s: %v", ev["type"], ev["data"])
			}
		}
	}
	if n != 2 {
		t.Fatalf("%d message events", n)
	}
}

// TestExternalProgramLimits: each limit on a runtime (its readiness
// check, its model list, its start) is configurable and, when it passes,
// reported as RUNTIME_TIMEOUT or a reason naming its config key; a slow
// first start does not fail the calls after it.
func TestExternalProgramLimits(t *testing.T) {
	const short = 300 * time.Millisecond
	gated := func(t *testing.T, tweak func(*agent.Limits)) (*env, string) {
		gate := filepath.Join(t.TempDir(), "gate")
		e := newEnv(t, withRuntime(fakeWith(map[string]string{fakeruntime.InitGateEnv: gate})), func(o *agent.Options) {
			tweak(&o.Limits)
		})
		return e, gate
	}
	open := func(gate string) { os.WriteFile(gate, nil, 0o600) }

	t.Run("models within the limit", func(t *testing.T) {
		e, gate := gated(t, func(l *agent.Limits) { l.ModelsTimeout = time.Minute })
		open(gate)
		if got := must(t, e.direct(), "list_agent_models", map[string]any{"runtime": "fake"}); len(got["models"].([]any)) != 2 {
			t.Fatalf("models: %v", got)
		}
	})
	t.Run("models past the limit, then listed", func(t *testing.T) {
		e, gate := gated(t, func(l *agent.Limits) { l.ModelsTimeout = short })
		_, err := e.eng.Models(context.Background(), "fake")
		if ec := errcode.As(err); ec.Code != agent.CodeRuntimeTimeout || ec.Details["limit"] != agent.ModelsTimeoutKey ||
			!strings.Contains(ec.Message, agent.ModelsTimeoutKey) {
			t.Fatalf("models past the limit: %v", err)
		}
		open(gate) // the listing still running finishes: the next call has it
		tstest.WaitFor(t, 30*time.Second, "the models", func() bool {
			m, err := e.eng.Models(context.Background(), "fake")
			return err == nil && len(m) == 2
		})
	})
	t.Run("models past the start limit, then listed", func(t *testing.T) {
		// Long enough for the fake to start once the gate is open.
		e, gate := gated(t, func(l *agent.Limits) { l.StartTimeout = 5 * time.Second })
		_, err := e.eng.Models(context.Background(), "fake")
		if ec := errcode.As(err); ec.Code != agent.CodeRuntimeTimeout || ec.Details["limit"] != agent.StartTimeoutKey {
			t.Fatalf("models past the start limit: %v", err)
		}
		open(gate) // a failed listing is not kept: the next call starts anew
		if m, err := e.eng.Models(context.Background(), "fake"); err != nil || len(m) != 2 {
			t.Fatalf("models after the gate opened: %v %v", m, err)
		}
	})
	t.Run("readiness past the limit", func(t *testing.T) {
		e, gate := gated(t, func(l *agent.Limits) { l.ProbeTimeout = short })
		c := e.direct()
		rt := must(t, c, "list_agent_runtimes", nil)["runtimes"].([]any)[0].(map[string]any)
		if rt["checking"] != true || !strings.Contains(rt["reason"].(string), agent.ProbeTimeoutKey) {
			t.Fatalf("runtime: %v", rt)
		}
		// Unknown readiness is no refusal: the task waits for its start.
		id := must(t, c, "submit_agent_task", map[string]any{"runtime": "fake", "workdir": "a", "prompt": "result r"})["task_id"].(string)
		open(gate)
		waitFor(t, c, id, "completed", statusIs("completed"))
	})
	t.Run("start past the limit", func(t *testing.T) {
		e, _ := gated(t, func(l *agent.Limits) { l.StartTimeout = short })
		c := e.direct()
		id := must(t, c, "submit_agent_task", map[string]any{"runtime": "fake", "workdir": "a", "prompt": "result r",
			"queue_if_not_ready": true})["task_id"].(string)
		got := waitFor(t, c, id, "the end", func(m map[string]any) bool { return m["terminal"] == true })
		if got["status"] != "failed" || !strings.Contains(got["reason"].(string), agent.StartTimeoutKey) {
			t.Fatalf("task: %v", got)
		}
	})
}

// TestCancelEdges: cancel while the runtime is still starting, cancel
// racing the turn's completion, and a runtime that ignores the interrupt
// for longer than the grace period.
func TestCancelEdges(t *testing.T) {
	t.Run("while starting", func(t *testing.T) {
		gate := filepath.Join(t.TempDir(), "gate") // never opened: the runtime never starts
		e := newEnv(t, withRuntime(fakeWith(map[string]string{fakeruntime.InitGateEnv: gate})))
		c := e.direct()
		id := must(t, c, "submit_agent_task", map[string]any{"runtime": "fake", "workdir": "a", "prompt": "result r",
			"queue_if_not_ready": true})["task_id"].(string)
		waitFor(t, c, id, "starting", statusIs("starting"))
		must(t, c, "cancel_agent_task", map[string]any{"task_id": id})
		got := waitFor(t, c, id, "the end", func(m map[string]any) bool { return m["terminal"] == true })
		if got["status"] != "cancelled" || got["session_id"] != nil {
			t.Fatalf("task: %v", got)
		}
	})
	t.Run("racing the completion", func(t *testing.T) {
		e := newEnv(t)
		c := e.direct()
		seen := map[string]int{}
		for range 20 {
			id := must(t, c, "submit_agent_task", map[string]any{"runtime": "fake", "workdir": "a", "prompt": "result r"})["task_id"].(string)
			waitFor(t, c, id, "running", func(m map[string]any) bool { return m["status"] != "queued" && m["status"] != "starting" })
			_, code := c("cancel_agent_task", map[string]any{"task_id": id})
			got := waitFor(t, c, id, "the end", func(m map[string]any) bool { return m["terminal"] == true })
			seen[got["status"].(string)]++
			switch got["status"] {
			case "completed":
				if got["result"] == nil || code != "" && code != agent.CodeInvalidState {
					t.Fatalf("completed: %v, cancel %q", got, code)
				}
			case "cancelled":
				if got["result"] != nil || code != "" {
					t.Fatalf("cancelled: %v, cancel %q", got, code)
				}
			default:
				t.Fatalf("task: %v", got)
			}
			if n := len(terminalEvents(t, c, id)); n != 1 {
				t.Fatalf("%d terminal state changes", n)
			}
		}
		t.Logf("outcomes: %v", seen)
	})
	t.Run("runtime ignores the interrupt", func(t *testing.T) {
		e := newEnv(t, func(o *agent.Options) { o.Limits.CancelGrace = 300 * time.Millisecond })
		c := e.direct()
		id := must(t, c, "submit_agent_task", map[string]any{"runtime": "fake", "workdir": "a", "prompt": "say hi\nstubborn 600000"})["task_id"].(string)
		waitFor(t, c, id, "the message", func(m map[string]any) bool { return m["last_seq"].(float64) >= 6 })
		must(t, c, "cancel_agent_task", map[string]any{"task_id": id})
		got := waitFor(t, c, id, "the end", func(m map[string]any) bool { return m["terminal"] == true })
		if got["status"] != "cancelled" {
			t.Fatalf("task: %v", got)
		}
		for _, ev := range allEvents(t, c, id, 500) {
			if ev["type"] == "turn.ended" {
				t.Fatalf("the stubborn runtime ended its turn: %v", ev)
			}
		}
	})
}

// TestRestartWithdrawsPending: hostlink stopping while a task waits for an
// approval cancels the task, and the request is withdrawn and reported as
// such (an event saying why); the next hostlink refuses an answer to it.
func TestRestartWithdrawsPending(t *testing.T) {
	w := newWorld(t)
	e := newEnvAt(t, w)
	c := e.direct()
	id := must(t, c, "submit_agent_task", map[string]any{"runtime": "fake", "workdir": "a", "prompt": "approve make\nresult r"})["task_id"].(string)
	task := waitFor(t, c, id, "the approval", pendingKind("approval"))
	rid := task["pending"].([]any)[0].(map[string]any)["request_id"].(string)
	e.eng.Close()

	e2 := newEnvAt(t, w)
	c2 := e2.direct()
	got := must(t, c2, "get_agent_task", map[string]any{"task_id": id})
	if got["status"] != "cancelled" || len(got["pending"].([]any)) != 0 {
		t.Fatalf("after the restart: %v", got)
	}
	withdrawn := 0
	for _, ev := range allEvents(t, c2, id, 500) {
		if ev["type"] == "request.withdrawn" && ev["request_id"] == rid && ev["data"].(map[string]any)["reason"] != "" {
			withdrawn++
		}
	}
	if withdrawn != 1 {
		t.Fatalf("%d request.withdrawn events for %s", withdrawn, rid)
	}
	if _, code := c2("respond_agent_approval", map[string]any{"task_id": id, "request_id": rid, "decision": "accept"}); code != agent.CodeRequestResolved {
		t.Fatalf("an answer after the restart: %q", code)
	}
}
