package policy_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/approvals"
	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/capture"
	"github.com/hostlink/hostlink/internal/commands"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/files"
	"github.com/hostlink/hostlink/internal/jail"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
)

// fixture is a registry with real file and command services over two
// workdirs, "a" and "b", under a policy.
type fixture struct {
	reg    *ops.Registry
	eng    *policy.Engine
	dirs   map[string]string
	broker *approvals.Broker
}

func newFixture(t testing.TB, cfg policy.Config) *fixture {
	t.Helper()
	base := t.TempDir()
	log, err := audit.Open(audit.Options{Dir: filepath.Join(base, "audit"), Key: make([]byte, 32), MaxBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	f := &fixture{dirs: map[string]string{}}
	var wds []*files.Workdir
	for _, alias := range []string{"a", "b"} {
		dir := filepath.Join(base, alias)
		os.MkdirAll(dir, 0o755)
		root, err := jail.Open(dir, jail.Options{})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { root.Close() })
		f.dirs[alias] = root.Dir()
		wds = append(wds, &files.Workdir{Alias: alias, Root: root})
	}
	fs := files.NewService(wds, files.Limits{MaxReadBytes: 1 << 20, MaxWriteBytes: 1 << 20, MaxListEntries: 100,
		MaxSearchMatches: 100, MaxSearchBytes: 1 << 20, MaxSearchFileBytes: 1 << 20})
	store, err := capture.Open(capture.Options{Dir: filepath.Join(base, "captures")})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	cmds := commands.New(fs, store, commands.Options{MaxConcurrent: 2, DefaultTimeout: time.Minute, MaxTimeout: time.Minute, InlineBytes: 4096})
	t.Cleanup(cmds.Close)
	f.broker = approvals.New(approvals.Options{Audit: log})
	f.eng = policy.New(cfg, f.broker)
	f.reg = ops.New(log, f.eng.Gate(policy.Hooks{Locate: fs.Locate}))
	files.Register(f.reg, fs)
	commands.Register(f.reg, cmds)
	return f
}

func (f *fixture) call(op string, args map[string]any) (any, errcode.Code) {
	b, _ := json.Marshal(args)
	out, err := f.reg.Call(context.Background(), ops.Caller{Transport: "test", Peer: "t"}, op, b, nil)
	return out, errcode.CodeOf(err)
}

func quick(c policy.Config) policy.Config {
	c.Wait, c.Timeout = 10*time.Millisecond, time.Minute
	return c
}

func TestModesAndRules(t *testing.T) {
	echo := []any{"go", "version"}
	if runtime.GOOS == "windows" {
		echo = []any{"cmd", "/c", "ver"}
	}
	tests := []struct {
		name string
		cfg  func(*policy.Config)
		op   string
		args map[string]any
		want errcode.Code
	}{
		{"read allowed by default", nil, "list_directory", map[string]any{"workdir": "a"}, ""},
		{"write asks by default", nil, "write_file", map[string]any{"workdir": "a", "path": "x", "content": "1"}, approvals.CodePending},
		{"command asks by default", nil, "run_command", map[string]any{"workdir": "a", "argv": echo}, approvals.CodePending},
		{"write denied", func(c *policy.Config) { c.Default.Modes[policy.FilesWrite] = policy.Deny }, "write_file",
			map[string]any{"workdir": "a", "path": "x", "content": "1"}, policy.CodeDenied},
		{"read denied", func(c *policy.Config) { c.Default.Modes[policy.FilesRead] = policy.Deny }, "list_directory",
			map[string]any{"workdir": "a"}, policy.CodeDenied},
		{"deny covers unasked operations", func(c *policy.Config) { c.Default.Modes[policy.Commands] = policy.Deny }, "list_commands",
			map[string]any{}, policy.CodeDenied},
		{"list_commands not asked", nil, "list_commands", map[string]any{}, ""},
		{"workdir override allows", func(c *policy.Config) {
			c.Workdirs = map[string]policy.Rules{"b": {Modes: map[string]policy.Mode{policy.FilesWrite: policy.Allow}}}
		}, "write_file", map[string]any{"workdir": "b", "path": "x", "content": "1"}, ""},
		{"workdir override leaves others asking", func(c *policy.Config) {
			c.Workdirs = map[string]policy.Rules{"b": {Modes: map[string]policy.Mode{policy.FilesWrite: policy.Allow}}}
		}, "write_file", map[string]any{"workdir": "a", "path": "x", "content": "1"}, approvals.CodePending},
		{"move into a denying workdir", func(c *policy.Config) {
			c.Default.Modes[policy.FilesWrite] = policy.Allow
			c.Workdirs = map[string]policy.Rules{"b": {Modes: map[string]policy.Mode{policy.FilesWrite: policy.Deny}}}
		}, "move", map[string]any{"workdir": "a", "src": "x", "dst": "y", "dst_workdir": "b"}, policy.CodeDenied},
		{"path glob allows", func(c *policy.Config) { c.Default.AllowPaths = []string{"notes/**"} }, "write_file",
			map[string]any{"workdir": "a", "path": "notes/d/x.md", "content": "1", "create_parents": true}, ""},
		{"path glob does not cover others", func(c *policy.Config) { c.Default.AllowPaths = []string{"notes/**"} }, "write_file",
			map[string]any{"workdir": "a", "path": "src/x", "content": "1"}, approvals.CodePending},
		{"exact command allowed", func(c *policy.Config) {
			c.Default.AllowCommands = []string{policy.CommandLine(map[string]any{"argv": echo})}
		},
			"run_command", map[string]any{"workdir": "a", "argv": echo}, ""},
		{"allowed command with env still asks", func(c *policy.Config) {
			c.Default.AllowCommands = []string{policy.CommandLine(map[string]any{"argv": echo})}
		},
			"run_command", map[string]any{"workdir": "a", "argv": echo, "env": map[string]any{"X": "1"}}, approvals.CodePending},
		{"other command asks", func(c *policy.Config) { c.Default.AllowCommands = []string{"make"} },
			"run_command", map[string]any{"workdir": "a", "argv": echo}, approvals.CodePending},
		// Lowering the sandbox is its own class: it asks even where
		// commands are allowed or the line is allowed, and commands = deny
		// denies it too.
		{"unsandboxed asks where commands are allowed", func(c *policy.Config) { c.Default.Modes[policy.Commands] = policy.Allow },
			"run_command", map[string]any{"workdir": "a", "argv": echo, "sandbox": "off"}, approvals.CodePending},
		{"network asks where commands are allowed", func(c *policy.Config) { c.Default.Modes[policy.Commands] = policy.Allow },
			"run_command", map[string]any{"workdir": "a", "argv": echo, "sandbox": "network"}, approvals.CodePending},
		{"the default sandbox is plain commands", func(c *policy.Config) { c.Default.Modes[policy.Commands] = policy.Allow },
			"run_command", map[string]any{"workdir": "a", "argv": echo, "sandbox": "default"}, ""},
		{"allow_commands does not cover unsandboxed", func(c *policy.Config) {
			c.Default.AllowCommands = []string{policy.CommandLine(map[string]any{"argv": echo})}
		}, "run_command", map[string]any{"workdir": "a", "argv": echo, "sandbox": "off"}, approvals.CodePending},
		{"commands deny covers unsandboxed", func(c *policy.Config) {
			c.Default.Modes[policy.Commands] = policy.Deny
			c.Default.Modes[policy.CommandsUnsandboxed] = policy.Allow
		}, "start_command", map[string]any{"workdir": "a", "argv": echo, "sandbox": "off"}, policy.CodeDenied},
		{"unsandboxed allowed when both allow", func(c *policy.Config) {
			c.Default.Modes[policy.Commands] = policy.Allow
			c.Default.Modes[policy.CommandsUnsandboxed] = policy.Allow
		}, "run_command", map[string]any{"workdir": "a", "argv": echo, "sandbox": "off"}, ""},
		{"bad path is the operation's error", nil, "write_file",
			map[string]any{"workdir": "a", "path": "../escape", "content": "1"}, errcode.PathOutsideRoot},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			cfg := policy.Defaults()
			if tt.cfg != nil {
				tt.cfg(&cfg)
			}
			f := newFixture(t, quick(cfg))
			if _, code := f.call(tt.op, tt.args); code != tt.want {
				t.Fatalf("%s = %q, want %q", tt.op, code, tt.want)
			}
		})
	}
}

// TestDescription: an approval shows the exact action: the command line,
// its directory and environment names (never values); the file, its
// operation and content.
func TestDescription(t *testing.T) {
	f := newFixture(t, quick(policy.Defaults()))
	f.call("run_command", map[string]any{"workdir": "b", "cwd": ".", "command": "echo hi", "env": map[string]any{"SECRET_TOKEN": "s3cr3t", "A": "1"}})
	f.call("write_file", map[string]any{"workdir": "a", "path": "d/x.txt", "content": "hello"})
	list := f.broker.List(true)
	if len(list) != 2 {
		t.Fatalf("pending %+v", list)
	}
	fields := func(a approvals.Approval) map[string]string {
		m := map[string]string{}
		for _, f := range a.Action.Fields {
			m[f.Label] = f.Value
		}
		return m
	}
	w, c := fields(list[0]), fields(list[1])
	if _, ok := c["Sandbox"]; ok {
		t.Errorf("a default-sandbox command shows a Sandbox field: %v", c)
	}
	if c["Command"] != "echo hi" || c["Directory"] != f.dirs["b"] || c["Environment names"] != "A, SECRET_TOKEN" {
		t.Errorf("command fields %v", c)
	}
	raw, _ := json.Marshal(list[1])
	if strings.Contains(string(raw), "s3cr3t") {
		t.Errorf("an environment value is in the approval: %s", raw)
	}
	if w["Path"] != filepath.Join(f.dirs["a"], "d", "x.txt") || !strings.HasPrefix(w["Content"], "5 bytes") || w["Content (start)"] != "hello" {
		t.Errorf("write fields %v", w)
	}
	if list[0].Action.Workdir != "a" || list[0].Action.Class != policy.FilesWrite || list[0].Action.Transport != "test" {
		t.Errorf("action %+v", list[0].Action)
	}
}

// TestApprovalRunsExactlyOnce: once approved, the identical request runs;
// a changed one asks again.
func TestApprovalRunsExactlyOnce(t *testing.T) {
	f := newFixture(t, quick(policy.Defaults()))
	args := map[string]any{"workdir": "a", "path": "x.txt", "content": "one"}
	if _, code := f.call("write_file", args); code != approvals.CodePending {
		t.Fatal(code)
	}
	p := f.broker.List(true)
	f.broker.Decide(p[0].ID, true, "me", "test")
	args["content"] = "two"
	if _, code := f.call("write_file", args); code != approvals.CodePending {
		t.Fatalf("changed request: %q", code)
	}
	if _, err := os.Stat(filepath.Join(f.dirs["a"], "x.txt")); err == nil {
		t.Fatal("the changed request was written")
	}
	args["content"] = "one"
	if _, code := f.call("write_file", args); code != "" {
		t.Fatalf("approved request: %q", code)
	}
	if b, _ := os.ReadFile(filepath.Join(f.dirs["a"], "x.txt")); string(b) != "one" {
		t.Fatalf("file holds %q", b)
	}
}

// TestUnsandboxedDescription: an approval to lower the sandbox says so,
// in its fields, its summary and its class.
func TestUnsandboxedDescription(t *testing.T) {
	for _, tt := range []struct{ sandbox, field, summary string }{
		{"off", "UNSANDBOXED", "[unsandboxed]"},
		{"network", "WITH NETWORK ACCESS", "[sandbox lowered: network]"},
	} {
		f := newFixture(t, quick(policy.Defaults()))
		f.call("run_command", map[string]any{"workdir": "a", "command": "make", "sandbox": tt.sandbox})
		list := f.broker.List(true)
		if len(list) != 1 {
			t.Fatalf("pending %+v", list)
		}
		a := list[0].Action
		var field string
		for _, fl := range a.Fields {
			if fl.Label == "Sandbox" {
				field = fl.Value
			}
		}
		if a.Class != policy.CommandsUnsandboxed || !strings.Contains(field, tt.field) || !strings.Contains(a.Summary, tt.summary) {
			t.Errorf("sandbox %s: class %q, field %q, summary %q", tt.sandbox, a.Class, field, a.Summary)
		}
	}
}

// TestReloadTakesEffect: Set replaces the policy for the next call.
func TestReloadTakesEffect(t *testing.T) {
	f := newFixture(t, quick(policy.Defaults()))
	args := map[string]any{"workdir": "a", "path": "x", "content": "1"}
	if _, code := f.call("write_file", args); code != approvals.CodePending {
		t.Fatal(code)
	}
	f.eng.Set(quick(policy.AllowAll()))
	if _, code := f.call("write_file", args); code != "" {
		t.Fatalf("after reload: %q", code)
	}
}

func TestMatchGlob(t *testing.T) {
	for _, tt := range []struct {
		glob, path string
		want       bool
	}{
		{"notes/**", "notes/a/b.md", true},
		{"notes/**", "notes", true},
		{"notes/**", "other/a", false},
		{"*.md", "a.md", true},
		{"*.md", "d/a.md", false},
		{"**/*.md", "d/e/a.md", true},
		{"src/*/x", "src/a/x", true},
		{"src/*/x", "src/a/b/x", false},
	} {
		if got := policy.MatchGlob(tt.glob, tt.path); got != tt.want {
			t.Errorf("MatchGlob(%q, %q) = %v", tt.glob, tt.path, got)
		}
	}
}

// TestClassify: every registered kind of operation lands in its class,
// and only looking at or stopping approved work goes unasked.
func TestClassify(t *testing.T) {
	for _, tt := range []struct {
		op    ops.Spec
		class string
		asks  bool
	}{
		{ops.Spec{Name: "read_file", Capability: "files", ReadOnly: true}, policy.FilesRead, true},
		{ops.Spec{Name: "list_workdirs", Capability: "files", ReadOnly: true}, policy.FilesRead, false},
		{ops.Spec{Name: "move", Capability: "files"}, policy.FilesWrite, true},
		{ops.Spec{Name: "run_command", Capability: "shell"}, policy.Commands, true},
		{ops.Spec{Name: "companion_run_command", Capability: "shell", Destructive: true}, policy.Commands, true},
		{ops.Spec{Name: "kill_command", Capability: "shell"}, policy.Commands, false},
		{ops.Spec{Name: "read_command_output", Capability: "shell", ReadOnly: true}, policy.Commands, false},
		{ops.Spec{Name: "computer_act", Capability: "computer_use"}, policy.Computer, true},
		{ops.Spec{Name: "computer_launch_app", Capability: "computer_use"}, policy.Computer, true},
		{ops.Spec{Name: "computer_clipboard_write", Capability: "computer_use", Destructive: true}, policy.Computer, true},
		{ops.Spec{Name: "computer_observe", Capability: "computer_use", ReadOnly: true}, policy.ComputerObserve, true},
		{ops.Spec{Name: "computer_clipboard_read", Capability: "computer_use", ReadOnly: true}, policy.ComputerObserve, true},
		{ops.Spec{Name: "computer_windows", Capability: "computer_use", ReadOnly: true}, policy.ComputerObserve, false},
		{ops.Spec{Name: "submit_agent_task", Capability: "agents"}, policy.Agents, true},
		{ops.Spec{Name: "respond_agent_approval", Capability: "agents"}, policy.Agents, true},
		{ops.Spec{Name: "cancel_agent_task", Capability: "agents"}, policy.Agents, false},
		{ops.Spec{Name: "something_new", Capability: "gadgets"}, "gadgets", true},
		{ops.Spec{Name: "gadget_status", Capability: "gadgets", ReadOnly: true}, "gadgets", false},
	} {
		class, asks := policy.Classify(&ops.Op{Spec: tt.op})
		if class != tt.class || asks != tt.asks {
			t.Errorf("%s: (%s, %v), want (%s, %v)", tt.op.Name, class, asks, tt.class, tt.asks)
		}
	}
}
