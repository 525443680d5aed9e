// Package agenttest runs agent runtime adapters through hostlink's
// operations in tests: a workdir, an engine, and the operation registry
// the daemon would build, plus the location of the real agent CLIs that
// .ci/run installs and the checks every runtime suite makes (approvals,
// streaming, cancelling, turn deadlines).
package agenttest

import (
	"context"
	"crypto/rand"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/agent"
	"github.com/hostlink/hostlink/internal/agentapi"
	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/files"
	"github.com/hostlink/hostlink/internal/jail"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/ops/opstest"
	"github.com/hostlink/hostlink/internal/tstest"
)

// CLIs returns the node_modules directory holding the pinned agent CLIs
// (HOSTLINK_AGENT_CLIS, set by .ci/run), or ends the test through
// tstest.Env.
func CLIs(t testing.TB) string {
	t.Helper()
	dir := tstest.Env(t, "HOSTLINK_AGENT_CLIS", "bash .ci/run installs the agent CLIs and sets it")
	if _, err := os.Stat(dir); err != nil {
		t.Fatalf("HOSTLINK_AGENT_CLIS: %v", err)
	}
	return dir
}

// Env is a hostlink engine with one workdir "w" (agent_mode
// workspace-write) and the agent and file operations in one registry.
type Env struct {
	T testing.TB
	// Workdir is the workdir's absolute path; Base holds it and the state.
	Workdir, Base string
	Eng           *agent.Engine
	Reg           *ops.Registry
	// QueueIfNotReady submits with queue_if_not_ready: for a runtime whose
	// readiness check cannot see how the test lets it run (Qoder's fake
	// responses need no login, its status says it has none).
	QueueIfNotReady bool

	opts  agent.Options
	roots []*jail.Root
	key   []byte
	log   *audit.Log
}

// New opens an engine whose runtimes are rts (all allowed).
func New(t testing.TB, rts map[string]agent.Factory, tweak ...func(*agent.Options)) *Env {
	t.Helper()
	base := t.TempDir()
	e := &Env{T: t, Base: base, Workdir: filepath.Join(base, "w"), key: make([]byte, 32)}
	rand.Read(e.key)
	if err := os.MkdirAll(e.Workdir, 0o755); err != nil {
		t.Fatal(err)
	}
	var allowed []string
	for n := range rts {
		allowed = append(allowed, n)
	}
	e.opts = agent.Options{
		Dir:      filepath.Join(base, "state"),
		Workdirs: []agent.WorkdirPolicy{{Alias: "w", Mode: agent.ModeWorkspaceWrite}},
		Runtimes: rts,
		Allowed:  allowed,
		// Generous limits on the CLIs: hang guards on a busy machine.
		Limits: agent.Limits{CancelGrace: 10 * time.Second, TurnTimeout: 3 * time.Minute,
			ProbeTimeout: 2 * time.Minute, ModelsTimeout: 3 * time.Minute, StartTimeout: 3 * time.Minute},
		Version: "test",
	}
	for _, f := range tweak {
		f(&e.opts)
	}
	e.open()
	t.Cleanup(e.close)
	return e
}

func (e *Env) open() {
	t := e.T
	root, err := jail.Open(e.Workdir, jail.Options{})
	if err != nil {
		t.Fatal(err)
	}
	e.roots = append(e.roots, root)
	fs := files.NewService([]*files.Workdir{{Alias: "w", Root: root}}, files.Limits{MaxReadBytes: 1 << 20,
		MaxWriteBytes: 1 << 20, MaxListEntries: 100, MaxSearchMatches: 10, MaxSearchBytes: 1 << 20, MaxSearchFileBytes: 1 << 20})
	o := e.opts
	o.Files = fs
	eng, err := agent.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	fs.SetGuard(eng.Leases())
	log, err := audit.Open(audit.Options{Dir: filepath.Join(e.Base, "audit"), Key: e.key, MachineID: "test", Version: "test"})
	if err != nil {
		t.Fatal(err)
	}
	reg := ops.New(ops.Options{Audit: log})
	files.Register(reg, fs)
	agent.Register(reg, eng)
	e.Eng, e.Reg, e.log = eng, reg, log
}

func (e *Env) close() {
	if e.Eng != nil {
		e.Eng.Close()
		e.Eng = nil
	}
	for _, r := range e.roots {
		r.Close()
	}
	e.roots = nil
	if e.log != nil {
		e.log.Close()
		e.log = nil
	}
}

// Restart closes the engine, as hostlink does when it stops, and opens a
// new one on the same state, as hostlink does when it starts again.
func (e *Env) Restart() {
	e.close()
	e.open()
}

// Call runs an operation.
func (e *Env) Call(op string, args map[string]any) (map[string]any, errcode.Code) {
	return opstest.Call(context.Background(), e.Reg, op, args)
}

// Must runs an operation that must succeed.
func (e *Env) Must(op string, args map[string]any) map[string]any {
	e.T.Helper()
	m, code := e.Call(op, args)
	if code != "" {
		e.T.Fatalf("%s %v: %s", op, args, code)
	}
	return m
}

// Submit submits a task in workdir w and returns its id.
func (e *Env) Submit(runtime, prompt, access string, extra map[string]any) string {
	e.T.Helper()
	args := map[string]any{"runtime": runtime, "workdir": "w", "prompt": prompt, "access": access}
	if e.QueueIfNotReady {
		args["queue_if_not_ready"] = true
	}
	for k, v := range extra {
		args[k] = v
	}
	return e.Must(agentapi.OpSubmitTask, args)["task_id"].(string)
}

// Wait polls get_agent_task until cond holds, for up to d.
func (e *Env) Wait(id, what string, d time.Duration, cond func(task map[string]any) bool) map[string]any {
	e.T.Helper()
	var task map[string]any
	if !tstest.Eventually(d, func() bool {
		task = e.Must(agentapi.OpGetTask, map[string]any{"task_id": id})
		if cond(task) {
			return true
		}
		if task["terminal"] == true {
			e.T.Fatalf("task %s ended while waiting for %s: %v\nevents:\n%s", id, what, task, e.Dump(id))
		}
		return false
	}) {
		e.T.Fatalf("task %s: waited too long for %s: %v\nevents:\n%s", id, what, task, e.Dump(id))
	}
	return task
}

// Pending waits for a pending request of kind and returns it.
func (e *Env) Pending(id, kind string) map[string]any {
	e.T.Helper()
	task := e.Wait(id, "a pending "+kind, 2*time.Minute, func(task map[string]any) bool {
		p, _ := task["pending"].([]any)
		return len(p) > 0 && p[0].(map[string]any)["kind"] == kind
	})
	return task["pending"].([]any)[0].(map[string]any)
}

// End waits for the task to end and returns it.
func (e *Env) End(id string, d time.Duration) map[string]any {
	e.T.Helper()
	var task map[string]any
	if !tstest.Eventually(d, func() bool {
		task = e.Must(agentapi.OpGetTask, map[string]any{"task_id": id})
		return task["terminal"] == true
	}) {
		e.T.Fatalf("task %s did not end: %v\nevents:\n%s", id, task, e.Dump(id))
	}
	return task
}

// Completed waits for the task to end, requires it completed, and returns
// its result.
func (e *Env) Completed(id string) string {
	e.T.Helper()
	task := e.End(id, 3*time.Minute)
	if task["status"] != "completed" {
		e.T.Fatalf("task %s is %v (%v), not completed\nevents:\n%s", id, task["status"], task["reason"], e.Dump(id))
	}
	return e.Result(id)
}

// Result reads a task's whole result.
func (e *Env) Result(id string) string {
	e.T.Helper()
	var b strings.Builder
	off := 0.0
	for {
		c := e.Must(agentapi.OpReadTaskResult, map[string]any{"task_id": id, "offset": off})
		b.WriteString(c["text"].(string))
		if c["eof"] == true {
			return b.String()
		}
		off = c["next_offset"].(float64)
	}
}

// Events returns every event of a task.
func (e *Env) Events(id string) []map[string]any {
	e.T.Helper()
	var out []map[string]any
	after := 0.0
	for {
		res := e.Must(agentapi.OpReadTaskEvents, map[string]any{"task_id": id, "after_seq": after, "max_events": 500})
		for _, ev := range res["events"].([]any) {
			out = append(out, ev.(map[string]any))
		}
		after = res["next_after_seq"].(float64)
		if res["more"] != true {
			return out
		}
	}
}

// Dump is a task's events, one a line, for failure messages.
func (e *Env) Dump(id string) string {
	var b strings.Builder
	after := 0.0
	for range 20 {
		res, code := e.Call(agentapi.OpReadTaskEvents, map[string]any{"task_id": id, "after_seq": after, "max_events": 500})
		if code != "" {
			return string(code)
		}
		for _, ev := range res["events"].([]any) {
			m := ev.(map[string]any)
			// The time of day shows where a slow run waited.
			s := m["type"].(string)
			if at, err := time.Parse(time.RFC3339Nano, fmt.Sprint(m["time"])); err == nil {
				s = at.UTC().Format("15:04:05.000") + " " + s
			}
			if d, ok := m["data"]; ok {
				s += " " + short(d)
			}
			b.WriteString("  " + s + "\n")
		}
		after = res["next_after_seq"].(float64)
		if res["more"] != true {
			break
		}
	}
	return b.String()
}

func short(v any) string {
	s := strings.ReplaceAll(strings.TrimSpace(fmtAny(v)), "\n", " ")
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// With returns e reporting to t (a subtest).
func (e *Env) With(t testing.TB) *Env {
	c := *e
	c.T = t
	return &c
}
