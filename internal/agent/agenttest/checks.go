package agenttest

import (
	"net"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// decision is the approval decision that accepts, or declines, what was
// asked.
func decision(accept bool) string {
	if accept {
		return "accept"
	}
	return "decline"
}

// approve waits for the task's approval, requires its summary to mention
// what, and accepts or declines it.
func (e *Env) approve(id, what string, accept bool) {
	e.T.Helper()
	p := e.Pending(id, "approval")
	if !strings.Contains(p["summary"].(string), what) {
		e.T.Fatalf("approval does not mention %q: %v", what, p)
	}
	e.Must("respond_agent_approval", map[string]any{"task_id": id, "request_id": p["request_id"], "decision": decision(accept)})
}

// Approval is a task that asks one approval before it writes a file.
type Approval struct {
	Prompt string
	Extra  map[string]any // more submit_agent_task arguments
	Asks   string         // what the approval's summary mentions
	Result string         // the task's result, accepted or not
	File   string         // the workdir's file it writes once accepted
}

// RunApproval removes a.File, submits a (workspace-write) to runtime,
// accepts or declines its approval, and requires its result and that
// a.File exists exactly when accepted.
func (e *Env) RunApproval(runtime string, a Approval, accept bool) {
	e.T.Helper()
	os.Remove(filepath.Join(e.Workdir, a.File))
	id := e.Submit(runtime, a.Prompt, "workspace-write", a.Extra)
	e.approve(id, a.Asks, accept)
	if got := e.Completed(id); got != a.Result {
		e.T.Fatalf("result %q, want %q\n%s", got, a.Result, e.Dump(id))
	}
	e.WantFile(id, a.File, accept)
}

// RunApprovalCancel removes a.File, submits a (workspace-write) to
// runtime, answers its approval with cancel, and requires the task to end
// cancelled, with no result and without a.File: cancel means the same on
// every runtime, whatever the runtime does with the answer.
func (e *Env) RunApprovalCancel(runtime string, a Approval) {
	e.T.Helper()
	os.Remove(filepath.Join(e.Workdir, a.File))
	id := e.Submit(runtime, a.Prompt, "workspace-write", a.Extra)
	p := e.Pending(id, "approval")
	if !strings.Contains(p["summary"].(string), a.Asks) {
		e.T.Fatalf("approval does not mention %q: %v", a.Asks, p)
	}
	e.Must("respond_agent_approval", map[string]any{"task_id": id, "request_id": p["request_id"], "decision": "cancel"})
	if task := e.End(id, 2*time.Minute); task["status"] != "cancelled" || task["result"] != nil {
		e.T.Fatalf("after cancel: %v\n%s", task, e.Dump(id))
	}
	e.WantFile(id, a.File, false)
}

// WantFile requires the workdir's file name to exist exactly when want;
// task id's events are shown when it does not.
func (e *Env) WantFile(id, name string, want bool) {
	e.T.Helper()
	if _, err := os.Stat(filepath.Join(e.Workdir, name)); want != (err == nil) {
		e.T.Fatalf("%s: want it %v, got %v\n%s", name, want, err, e.Dump(id))
	}
}

// HasEvent reports whether the task has an event of type typ.
func (e *Env) HasEvent(id, typ string) bool {
	e.T.Helper()
	for _, ev := range e.Events(id) {
		if ev["type"] == typ {
			return true
		}
	}
	return false
}

// turnEnded reports whether one of the task's turns ended with status.
func (e *Env) turnEnded(id, status string) bool {
	e.T.Helper()
	for _, ev := range e.Events(id) {
		if ev["type"] == "turn.ended" && ev["data"].(map[string]any)["status"] == status {
			return true
		}
	}
	return false
}

// WaitDelta waits for the task's first streamed message delta.
func (e *Env) WaitDelta(id string) {
	e.T.Helper()
	e.Wait(id, "a streamed message", 2*time.Minute, func(map[string]any) bool { return e.HasEvent(id, "item.delta") })
}

// Cancel waits for the task to stream, cancels it, and requires it to
// end cancelled with its turn interrupted.
func (e *Env) Cancel(id string) {
	e.T.Helper()
	e.WaitDelta(id)
	e.Must("cancel_agent_task", map[string]any{"task_id": id})
	if task := e.End(id, time.Minute); task["status"] != "cancelled" || !e.turnEnded(id, "interrupted") {
		e.T.Fatalf("task: %v\n%s", task, e.Dump(id))
	}
}

// WantTurnTimeout submits a read-only task and requires it to fail at
// hostlink's turn deadline (a model that never answers).
func (e *Env) WantTurnTimeout(runtime, prompt string) {
	e.T.Helper()
	id := e.Submit(runtime, prompt, "read-only", nil)
	task := e.End(id, 2*time.Minute)
	if task["status"] != "failed" || !strings.Contains(task["reason"].(string), "turn_timeout") {
		e.T.Fatalf("task: %v\n%s", task, e.Dump(id))
	}
}

// UnreachableURL is an http URL on loopback where nothing listens.
func UnreachableURL(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ln.Close()
	return "http://" + ln.Addr().String()
}

// BigText is a model answer whose protocol lines are far over 64 KiB.
var BigText = strings.Repeat("0123456789abcdé ", 20<<10)

// Runtime is list_agent_runtimes' entry for the engine's first runtime.
func (e *Env) Runtime() map[string]any {
	e.T.Helper()
	return e.Must("list_agent_runtimes", nil)["runtimes"].([]any)[0].(map[string]any)
}

// WantModels requires list_agent_models to list some of runtime's models.
func (e *Env) WantModels(runtime string) {
	e.T.Helper()
	models := e.Must("list_agent_models", map[string]any{"runtime": runtime})
	if models["supported"] != true || len(models["models"].([]any)) == 0 {
		e.T.Fatalf("models: %v", models)
	}
}
