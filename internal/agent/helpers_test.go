package agent_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hostlink/hostlink/internal/agent"
	"github.com/hostlink/hostlink/internal/agent/fakeruntime"
	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/files"
	"github.com/hostlink/hostlink/internal/ipc"
	"github.com/hostlink/hostlink/internal/jail"
	"github.com/hostlink/hostlink/internal/mcpserve"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/ops/opstest"
	"github.com/hostlink/hostlink/internal/tstest"
)

// TestMain doubles as the fake runtime program (HOSTLINK_FAKE_AGENT=1) and
// as the crash-loop helper (HOSTLINK_AGENT_CRASH_HELPER), so the tests run
// real child processes without building anything.
func TestMain(m *testing.M) {
	if os.Getenv("HOSTLINK_FAKE_AGENT") == "1" {
		os.Exit(fakeruntime.Main(os.Stdin, os.Stdout))
	}
	if dir := os.Getenv("HOSTLINK_AGENT_CRASH_HELPER"); dir != "" {
		os.Exit(crashHelper(dir))
	}
	os.Exit(m.Run())
}

// fake is the fake runtime as this test binary re-executed. With -race,
// GORACE keeps the race runtime from sleeping a second at every exit.
func fake() agent.Factory {
	return func() (agent.Runtime, error) {
		return &fakeruntime.Runtime{Argv: []string{os.Args[0]},
			Env: map[string]string{"HOSTLINK_FAKE_AGENT": "1", "GORACE": "atexit_sleep_ms=0"}}, nil
	}
}

// world is a state directory and three workdirs: a (workspace-write), b
// (read-only for agents) and c (agents disabled).
type world struct {
	base, state string
	dirs        map[string]string
}

func newWorld(t testing.TB) world { return worldAt(t.TempDir()) }

// env is an engine over a world, with its operations and the file
// operations in one registry, as the daemon wires them.
type env struct {
	t     testing.TB
	w     world
	eng   *agent.Engine
	reg   *ops.Registry
	audit *audit.Log
	files *files.Service
}

func openFiles(t testing.TB, w world) *files.Service {
	fs, roots, err := filesFor(w)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		for _, r := range roots {
			r.Close()
		}
	})
	return fs
}

func filesFor(w world) (*files.Service, []*jail.Root, error) {
	var wds []*files.Workdir
	var roots []*jail.Root
	for _, a := range []string{"a", "b", "c"} {
		r, err := jail.Open(w.dirs[a], jail.Options{})
		if err != nil {
			return nil, nil, err
		}
		roots = append(roots, r)
		wds = append(wds, &files.Workdir{Alias: a, Root: r})
	}
	return files.NewService(wds, files.Limits{MaxReadBytes: 1 << 20, MaxWriteBytes: 1 << 20, MaxListEntries: 100,
		MaxSearchMatches: 10, MaxSearchBytes: 1 << 20, MaxSearchFileBytes: 1 << 20}), roots, nil
}

func worldAt(base string) world {
	w := world{base: base, state: filepath.Join(base, "state"), dirs: map[string]string{}}
	for _, a := range []string{"a", "b", "c"} {
		w.dirs[a] = filepath.Join(base, a)
		os.MkdirAll(w.dirs[a], 0o755)
	}
	return w
}

func engineOptions(w world, fs *files.Service) agent.Options {
	return agent.Options{
		Dir:   w.state,
		Files: fs,
		Workdirs: []agent.WorkdirPolicy{
			{Alias: "a", Mode: agent.ModeWorkspaceWrite},
			{Alias: "b", Mode: agent.ModeReadOnly},
			{Alias: "c", Mode: agent.ModeDisabled},
		},
		Runtimes: map[string]agent.Factory{"fake": fake()},
		Allowed:  []string{"fake"},
		Limits:   agent.Limits{CancelGrace: 3 * time.Second},
		Version:  "test",
	}
}

func newEnv(t testing.TB, tweak ...func(*agent.Options)) *env {
	t.Helper()
	return newEnvAt(t, newWorld(t), tweak...)
}

// newEnvAt opens an engine over an existing world, as a restart does.
func newEnvAt(t testing.TB, w world, tweak ...func(*agent.Options)) *env {
	t.Helper()
	fs := openFiles(t, w)
	o := engineOptions(w, fs)
	for _, f := range tweak {
		f(&o)
	}
	eng, err := agent.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { eng.Close() })
	fs.SetGuard(eng.Leases())
	// Each engine its own audit log: a restarted one has a new key.
	log := opstest.AuditLog(t)
	reg := ops.New(ops.Options{Audit: log})
	files.Register(reg, fs)
	agent.Register(reg, eng)
	return &env{t: t, w: w, eng: eng, reg: reg, audit: log, files: fs}
}

// caller calls an operation the way one transport does.
type caller func(op string, args map[string]any) (map[string]any, errcode.Code)

func (e *env) direct() caller {
	return func(op string, args map[string]any) (map[string]any, errcode.Code) {
		return opstest.Call(context.Background(), e.reg, op, args)
	}
}

// mcpCaller connects a Go MCP SDK client to the registry's MCP server.
func (e *env) mcpCaller() caller {
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := mcpserve.NewServer(e.reg, audit.MCPStdio, "test").Connect(ctx, st, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "t", Version: "1"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { cs.Close() })
	return func(op string, args map[string]any) (map[string]any, errcode.Code) {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: op, Arguments: args})
		if err != nil {
			e.t.Fatalf("MCP %s: %v", op, err)
		}
		text := res.Content[0].(*mcp.TextContent).Text
		if res.IsError {
			var body struct{ Error errcode.Error }
			json.Unmarshal([]byte(text), &body)
			return map[string]any{"error": text}, body.Error.Code
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(text), &m); err != nil {
			e.t.Fatalf("MCP %s: %v", op, err)
		}
		return m, ""
	}
}

// ipcCaller serves the control channel on a real socket (named pipe on
// Windows) and calls through it.
func (e *env) ipcCaller() caller {
	ctx, cancel := context.WithCancel(context.Background())
	dir, err := os.MkdirTemp("", "hl")
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { os.RemoveAll(dir) })
	addr, err := ipc.Address(dir)
	if err != nil {
		e.t.Fatal(err)
	}
	ln, err := ipc.Listen(addr)
	if err != nil {
		e.t.Fatal(err)
	}
	srv := &ipc.Server{Registry: e.reg}
	done := make(chan struct{})
	go func() { srv.Serve(ctx, ln); close(done) }()
	e.t.Cleanup(func() { cancel(); <-done })
	c, err := ipc.Connect(ctx, addr)
	if err != nil {
		e.t.Fatal(err)
	}
	e.t.Cleanup(func() { c.Close() })
	return func(op string, args map[string]any) (map[string]any, errcode.Code) {
		if args == nil {
			args = map[string]any{}
		}
		raw, _ := json.Marshal(args)
		out, err := c.Call(ctx, op, raw)
		if err != nil {
			return map[string]any{"error": err.Error()}, errcode.CodeOf(err)
		}
		var m map[string]any
		if err := json.Unmarshal(out, &m); err != nil {
			e.t.Fatalf("ipc %s: %v", op, err)
		}
		return m, ""
	}
}

func must(t testing.TB, c caller, op string, args map[string]any) map[string]any {
	t.Helper()
	m, code := c(op, args)
	if code != "" {
		t.Fatalf("%s %v: %s %v", op, args, code, m) // m holds the message, through MCP and the control channel
	}
	return m
}

// waitFor polls get_agent_task until cond holds.
func waitFor(t testing.TB, c caller, id, what string, cond func(task map[string]any) bool) map[string]any {
	t.Helper()
	var task map[string]any
	if !tstest.Eventually(30*time.Second, func() bool {
		task = must(t, c, "get_agent_task", map[string]any{"task_id": id})
		return cond(task)
	}) {
		t.Fatalf("task %s: waited too long for %s: %v", id, what, task)
	}
	return task
}

func statusIs(want string) func(map[string]any) bool {
	return func(task map[string]any) bool { return task["status"] == want }
}

func pendingKind(kind string) func(map[string]any) bool {
	return func(task map[string]any) bool {
		p, _ := task["pending"].([]any)
		return len(p) > 0 && p[0].(map[string]any)["kind"] == kind
	}
}

// allEvents reads every event of a task through paging of size page.
func allEvents(t testing.TB, c caller, id string, page int) []map[string]any {
	t.Helper()
	var out []map[string]any
	var after float64
	for {
		res := must(t, c, "read_agent_task_events", map[string]any{"task_id": id, "after_seq": after, "max_events": page})
		evs := res["events"].([]any)
		for _, e := range evs {
			out = append(out, e.(map[string]any))
		}
		after = res["next_after_seq"].(float64)
		if !res["more"].(bool) {
			return out
		}
	}
}
