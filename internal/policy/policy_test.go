package policy_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/approvals"
	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/daemon"
	"github.com/hostlink/hostlink/internal/daemon/daemontest"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
)

// fixture is a daemon with two workdirs, "a" and "b", commands enabled,
// under a [policy] table: its registry is the one the daemon assembles.
type fixture struct {
	d    *daemon.Daemon
	dirs map[string]string
}

// quick makes approvals fail fast: a call waits 1 s for a decision.
const quick = "approval_timeout_seconds = 60\nwait_seconds = 1\n"

func newFixture(t testing.TB, policyTOML string) *fixture {
	t.Helper()
	d, home := daemontest.Open(t, daemontest.Config{Workdirs: []string{"a", "b"},
		TOML: "[commands]\nenabled = true\n[policy]\n" + quick + policyTOML}, daemon.Options{})
	return &fixture{d: d, dirs: map[string]string{"a": filepath.Join(home, "a"), "b": filepath.Join(home, "b")}}
}

func (f *fixture) call(op string, args map[string]any) (any, errcode.Code) {
	b, _ := json.Marshal(args)
	out, err := f.d.Registry.Call(context.Background(), ops.Caller{Transport: audit.MCPStdio, Peer: "t"}, op, b, nil)
	return out, errcode.CodeOf(err)
}

// reload replaces the [policy] table and puts it in force.
func (f *fixture) reload(t *testing.T, policyTOML string) {
	t.Helper()
	cfg := "[[workdirs]]\nalias = \"a\"\npath = '" + f.dirs["a"] + "'\n[[workdirs]]\nalias = \"b\"\npath = '" + f.dirs["b"] + "'\n" +
		"[commands]\nenabled = true\n[policy]\n" + quick + policyTOML
	if err := os.WriteFile(filepath.Join(filepath.Dir(f.dirs["a"]), "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := f.d.Reload("test"); err != nil {
		t.Fatal(err)
	}
}

func echoArgv() []string {
	if runtime.GOOS == "windows" {
		return []string{"cmd", "/c", "ver"}
	}
	return []string{"go", "version"}
}

func TestModesAndRules(t *testing.T) {
	echo := echoArgv()
	line := policy.CommandLine("", echo)
	tests := []struct {
		name   string
		policy string
		op     string
		args   map[string]any
		want   errcode.Code
	}{
		{"read allowed by default", "", "list_directory", map[string]any{"workdir": "a"}, ""},
		{"write asks by default", "", "write_file", map[string]any{"workdir": "a", "path": "x", "content": "1"}, approvals.CodePending},
		{"command asks by default", "", "run_command", map[string]any{"workdir": "a", "argv": echo}, approvals.CodePending},
		{"write denied", `files_write = "deny"`, "write_file", map[string]any{"workdir": "a", "path": "x", "content": "1"}, policy.CodeDenied},
		{"read denied", `files_read = "deny"`, "list_directory", map[string]any{"workdir": "a"}, policy.CodeDenied},
		{"deny covers unasked operations", `commands = "deny"`, "list_commands", map[string]any{}, policy.CodeDenied},
		{"list_commands not asked", "", "list_commands", map[string]any{}, ""},
		{"workdir override allows", "[policy.workdirs.b]\nfiles_write = \"allow\"", "write_file",
			map[string]any{"workdir": "b", "path": "x", "content": "1"}, ""},
		{"workdir override leaves others asking", "[policy.workdirs.b]\nfiles_write = \"allow\"", "write_file",
			map[string]any{"workdir": "a", "path": "x", "content": "1"}, approvals.CodePending},
		{"move into a denying workdir", "files_write = \"allow\"\n[policy.workdirs.b]\nfiles_write = \"deny\"", "move",
			map[string]any{"workdir": "a", "src": "x", "dst": "y", "dst_workdir": "b"}, policy.CodeDenied},
		{"path glob allows", `allow_paths = ["notes/**"]`, "write_file",
			map[string]any{"workdir": "a", "path": "notes/d/x.md", "content": "1", "create_parents": true}, ""},
		{"brace glob allows", `allow_paths = ["{notes,docs}/**"]`, "write_file",
			map[string]any{"workdir": "a", "path": "docs/x.md", "content": "1", "create_parents": true}, ""},
		{"path glob does not cover others", `allow_paths = ["notes/**"]`, "write_file",
			map[string]any{"workdir": "a", "path": "src/x", "content": "1"}, approvals.CodePending},
		{"exact command allowed", `allow_commands = ["` + line + `"]`, "run_command", map[string]any{"workdir": "a", "argv": echo}, ""},
		{"allowed command with env still asks", `allow_commands = ["` + line + `"]`, "run_command",
			map[string]any{"workdir": "a", "argv": echo, "env": map[string]any{"X": "1"}}, approvals.CodePending},
		{"other command asks", `allow_commands = ["make"]`, "run_command", map[string]any{"workdir": "a", "argv": echo}, approvals.CodePending},
		// Lowering the sandbox is its own class: it asks even where
		// commands are allowed or the line is allowed, and commands = deny
		// denies it too.
		{"unsandboxed asks where commands are allowed", `commands = "allow"`,
			"run_command", map[string]any{"workdir": "a", "argv": echo, "sandbox": "off"}, approvals.CodePending},
		{"network asks where commands are allowed", `commands = "allow"`,
			"run_command", map[string]any{"workdir": "a", "argv": echo, "sandbox": "network"}, approvals.CodePending},
		{"the default sandbox is plain commands", `commands = "allow"`,
			"run_command", map[string]any{"workdir": "a", "argv": echo, "sandbox": "default"}, ""},
		{"allow_commands does not cover unsandboxed", `allow_commands = ["` + line + `"]`,
			"run_command", map[string]any{"workdir": "a", "argv": echo, "sandbox": "off"}, approvals.CodePending},
		{"commands deny covers unsandboxed", "commands = \"deny\"\ncommands_unsandboxed = \"allow\"",
			"start_command", map[string]any{"workdir": "a", "argv": echo, "sandbox": "off"}, policy.CodeDenied},
		{"unsandboxed allowed when both allow", "commands = \"allow\"\ncommands_unsandboxed = \"allow\"",
			"run_command", map[string]any{"workdir": "a", "argv": echo, "sandbox": "off"}, ""},
		{"bad path is the operation's error", "", "write_file",
			map[string]any{"workdir": "a", "path": "../escape", "content": "1"}, errcode.PathOutsideRoot},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, tt.policy)
			if _, code := f.call(tt.op, tt.args); code != tt.want {
				t.Fatalf("%s = %q, want %q", tt.op, code, tt.want)
			}
		})
	}
}

// TestReadDeniedThroughWrites: whatever reveals a file's content, hash or
// diff needs files_read on it, whatever else it does; a move out of a
// workdir needs files_read there and files_write at both ends (#16 item 5).
func TestReadDeniedThroughWrites(t *testing.T) {
	f := newFixture(t, "files_write = \"allow\"\n[policy.workdirs.a]\nfiles_read = \"deny\"")
	os.WriteFile(filepath.Join(f.dirs["a"], "secret.txt"), []byte("the secret\n"), 0o600)
	for _, tt := range []struct {
		name string
		op   string
		args map[string]any
		want errcode.Code
	}{
		{"a dry-run edit shows the lines", "edit_file", map[string]any{"workdir": "a", "path": "secret.txt", "dry_run": true,
			"edits": []any{map[string]any{"old_text": "the", "new_text": "a"}}}, policy.CodeDenied},
		{"an edit returns a diff", "edit_file", map[string]any{"workdir": "a", "path": "secret.txt",
			"edits": []any{map[string]any{"old_text": "the", "new_text": "a"}}}, policy.CodeDenied},
		{"a failed if_revision shows the hash", "write_file", map[string]any{"workdir": "a", "path": "secret.txt", "content": "x",
			"if_revision": "nope"}, policy.CodeDenied},
		{"a move out carries the content away", "move", map[string]any{"workdir": "a", "src": "secret.txt", "dst": "s.txt",
			"dst_workdir": "b"}, policy.CodeDenied},
		{"reading is denied", "read_file", map[string]any{"workdir": "a", "path": "secret.txt"}, policy.CodeDenied},
		{"a plain write reveals nothing", "write_file", map[string]any{"workdir": "a", "path": "new.txt", "content": "x"}, ""},
		{"a move within stays there", "move", map[string]any{"workdir": "a", "src": "new.txt", "dst": "new2.txt"}, ""},
		{"a move in needs no read at the source", "write_file", map[string]any{"workdir": "b", "path": "in.txt", "content": "x"}, ""},
		{"", "move", map[string]any{"workdir": "b", "src": "in.txt", "dst": "in.txt", "dst_workdir": "a"}, ""},
	} {
		if _, code := f.call(tt.op, tt.args); code != tt.want {
			t.Errorf("%s (%s): %q, want %q", tt.op, tt.name, code, tt.want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(f.dirs["a"], "secret.txt")); string(b) != "the secret\n" {
		t.Errorf("secret.txt was changed: %q", b)
	}
	if _, err := os.Stat(filepath.Join(f.dirs["b"], "s.txt")); err == nil {
		t.Error("the denied move happened")
	}
}

// TestAllowPathsMatchResolvedPath: allow_paths must hold for the path as
// written and for the object it reaches through symlinks (#16 item 6).
func TestAllowPathsMatchResolvedPath(t *testing.T) {
	f := newFixture(t, `allow_paths = ["scratch/**"]`)
	a := f.dirs["a"]
	os.MkdirAll(filepath.Join(a, "scratch"), 0o755)
	os.MkdirAll(filepath.Join(a, "src"), 0o755)
	os.WriteFile(filepath.Join(a, "src", "main.go"), []byte("package main\n"), 0o600)
	if err := os.Symlink("../src", filepath.Join(a, "scratch", "up")); err != nil {
		if runtime.GOOS == "windows" {
			t.Skipf("no symlinks here: %v", err)
		}
		t.Fatal(err)
	}
	for _, tt := range []struct {
		op   string
		args map[string]any
		want errcode.Code
	}{
		{"write_file", map[string]any{"workdir": "a", "path": "scratch/up/main.go", "content": "pwned"}, approvals.CodePending},
		{"delete", map[string]any{"workdir": "a", "path": "scratch/up/main.go"}, approvals.CodePending},
		{"edit_file", map[string]any{"workdir": "a", "path": "scratch/up/main.go",
			"edits": []any{map[string]any{"old_text": "main", "new_text": "x"}}}, approvals.CodePending},
		{"write_file", map[string]any{"workdir": "a", "path": "scratch/own.txt", "content": "fine"}, ""},
	} {
		if _, code := f.call(tt.op, tt.args); code != tt.want {
			t.Errorf("%s %v: %q, want %q", tt.op, tt.args["path"], code, tt.want)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(a, "src", "main.go")); string(b) != "package main\n" {
		t.Fatalf("src/main.go changed through the planted link: %q", b)
	}
}

// TestDescription: an approval shows the exact action: the command line,
// its directory and environment names (never values); the file, its
// operation and content.
func TestDescription(t *testing.T) {
	f := newFixture(t, "")
	f.call("run_command", map[string]any{"workdir": "b", "cwd": ".", "command": "echo hi", "env": map[string]any{"SECRET_TOKEN": "s3cr3t", "A": "1"}})
	f.call("write_file", map[string]any{"workdir": "a", "path": "d/x.txt", "content": "hello"})
	list := f.d.Approvals().List(true)
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
	// A command that asks for no timeout shows the one it will run under.
	if want := fmt.Sprintf("%ds (the configured default)", f.d.Config.Commands.DefaultTimeoutSeconds); c["Timeout"] != want {
		t.Errorf("timeout %q, want %q", c["Timeout"], want)
	}
	if c["Operation"] != "run_command (Run command)" || c["Requested by"] != "mcp-stdio t" {
		t.Errorf("the fields every description shows: %v", c)
	}
	raw, _ := json.Marshal(list[1])
	if strings.Contains(string(raw), "s3cr3t") {
		t.Errorf("an environment value is in the approval: %s", raw)
	}
	if w["Path"] != filepath.Join(f.dirs["a"], "d", "x.txt") || !strings.HasPrefix(w["Content"], "5 bytes") || w["Change"] != "new file, 5 bytes" {
		t.Errorf("write fields %v", w)
	}
	if list[0].Action.Workdir != "a" || list[0].Action.Class != string(policy.FilesWrite) || list[0].Action.Transport != audit.MCPStdio {
		t.Errorf("action %+v", list[0].Action)
	}
}

// TestApprovalRunsExactlyOnce: once approved, the identical request runs;
// a changed one asks again.
func TestApprovalRunsExactlyOnce(t *testing.T) {
	f := newFixture(t, "")
	args := map[string]any{"workdir": "a", "path": "x.txt", "content": "one"}
	if _, code := f.call("write_file", args); code != approvals.CodePending {
		t.Fatal(code)
	}
	p := f.d.Approvals().List(true)
	f.d.Approvals().Decide(p[0].ID, true, "me", audit.IPC)
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
		f := newFixture(t, "")
		f.call("run_command", map[string]any{"workdir": "a", "command": "make", "sandbox": tt.sandbox})
		list := f.d.Approvals().List(true)
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
		if a.Class != string(policy.CommandsUnsandboxed) || !strings.Contains(field, tt.field) || !strings.Contains(a.Summary, tt.summary) {
			t.Errorf("sandbox %s: class %q, field %q, summary %q", tt.sandbox, a.Class, field, a.Summary)
		}
	}
}

// TestReloadTakesEffect: a reload replaces the policy for the next call.
func TestReloadTakesEffect(t *testing.T) {
	f := newFixture(t, "")
	args := map[string]any{"workdir": "a", "path": "x", "content": "1"}
	if _, code := f.call("write_file", args); code != approvals.CodePending {
		t.Fatal(code)
	}
	f.reload(t, `files_write = "allow"`)
	if _, code := f.call("write_file", args); code != "" {
		t.Fatalf("after reload: %q", code)
	}
}

// TestMoveJudgedWhereItGoes: a move's dst is placed once, by the rule the
// move itself follows, for the policy and the move alike: an absolute dst
// in another workdir is judged by that workdir's policy, not refused as
// lying outside src's.
func TestMoveJudgedWhereItGoes(t *testing.T) {
	f := newFixture(t, "files_write = \"allow\"\n[policy.workdirs.b]\nfiles_write = \"deny\"")
	dirA, errA := filepath.EvalSymlinks(f.dirs["a"])
	dirB, errB := filepath.EvalSymlinks(f.dirs["b"])
	if errA != nil || errB != nil {
		t.Fatal(errA, errB)
	}
	if err := os.WriteFile(filepath.Join(dirA, "x"), []byte("1"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, code := f.call("move", map[string]any{"src": "x", "dst": filepath.Join(dirB, "y")}); code != policy.CodeDenied {
		t.Errorf("move to an absolute dst in a denying workdir: %q, want %q", code, policy.CodeDenied)
	}
	if _, code := f.call("move", map[string]any{"src": "x", "dst": filepath.Join(dirA, "y")}); code != "" {
		t.Errorf("move to an absolute dst in src's workdir: %q", code)
	}
	if _, err := os.Stat(filepath.Join(dirA, "y")); err != nil {
		t.Errorf("the allowed move did not happen: %v", err)
	}
}
