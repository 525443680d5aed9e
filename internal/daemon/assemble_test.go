package daemon

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/capture"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/lease"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
	"github.com/hostlink/hostlink/internal/tstest"
)

// openFull opens a daemon with every capability hostlink has enabled
// (commands, the desktop with its clipboard, agents in workdir "w",
// companions), everything allowed, in a fresh home. Under Wine, which
// cannot label a directory low integrity, the command sandbox is failed
// and refuses commands (TestProbeHonest), so commands run unconfined
// there; everywhere else they run in the default sandbox.
func openFull(t *testing.T) (*Daemon, string) {
	t.Helper()
	home := t.TempDir()
	if h, err := filepath.EvalSymlinks(home); err == nil {
		home = h
	}
	t.Setenv("HOSTLINK_HOME", home)
	w := filepath.Join(home, "w")
	os.MkdirAll(w, 0o755)
	cfg := filepath.Join(home, "c.toml")
	sandbox := ""
	if tstest.UnderWine() {
		sandbox = "sandbox = \"off\"\n"
	}
	os.WriteFile(cfg, []byte("[commands]\nenabled = true\nmax_timeout_seconds = 604800\n"+sandbox+"[computer]\nenabled = true\nclipboard = true\n"+
		"[companion]\nlisten = \"127.0.0.1:0\"\n[agents]\nenabled = true\n"+
		"[[workdirs]]\nalias = \"w\"\npath = '"+w+"'\nagent_mode = \"workspace-write\"\n"+
		"[policy]\nfiles_write = \"allow\"\ncommands = \"allow\"\ncomputer = \"allow\"\nagents = \"allow\"\nplatform_folders = \"allow\"\n"), 0o600)
	d, err := Open(Options{ConfigPath: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, home
}

// The class each of these operations falls in and whether it is put to the
// user under ask: only looking at or stopping work already approved, and
// listing what exists, goes unasked. (An operation added later declares
// its own in its spec; TestEveryOperationIsComplete checks it has one.)
var wantClass = map[string]struct {
	class policy.Class
	noAsk bool
}{
	"list_workdirs": {policy.FilesRead, true}, "read_file": {policy.FilesRead, false}, "stat": {policy.FilesRead, false},
	"list_directory": {policy.FilesRead, false}, "find_files": {policy.FilesRead, false}, "search_text": {policy.FilesRead, false},
	"write_file": {policy.FilesWrite, false}, "edit_file": {policy.FilesWrite, false}, "create_directory": {policy.FilesWrite, false},
	"delete": {policy.FilesWrite, false}, "move": {policy.FilesWrite, false},
	"run_command": {policy.Commands, false}, "start_command": {policy.Commands, false}, "send_command_input": {policy.Commands, false},
	"command_status": {policy.Commands, true}, "list_commands": {policy.Commands, true}, "read_command_output": {policy.Commands, true},
	"kill_command": {policy.Commands, true}, "companion_run_command": {policy.Commands, false},
	"computer_act": {policy.Computer, false}, "computer_launch_app": {policy.Computer, false},
	"computer_clipboard_write": {policy.Computer, false}, "computer_focus_window": {policy.Computer, false},
	"computer_observe": {policy.ComputerObserve, false}, "computer_clipboard_read": {policy.ComputerObserve, false},
	"computer_windows": {policy.ComputerObserve, true}, "computer_desktops": {policy.ComputerObserve, true},
	"computer_apps": {policy.ComputerObserve, true}, "computer_permissions": {policy.ComputerObserve, true},
	"submit_agent_task": {policy.Agents, false}, "respond_agent_approval": {policy.Agents, false},
	"answer_agent_question": {policy.Agents, false}, "send_agent_message": {policy.Agents, false},
	"cancel_agent_task": {policy.Agents, true}, "get_agent_task": {policy.Agents, true}, "read_agent_task_events": {policy.Agents, true},
	"read_agent_task_result": {policy.Agents, true}, "list_agent_runtimes": {policy.Agents, true}, "list_agent_models": {policy.Agents, true},
	"companion_status": {policy.Hostlink, false}, "browse_directories": {policy.PlatformFolders, true},
	"status": {policy.Hostlink, false}, "approvals.list": {policy.Hostlink, false}, "approvals.show": {policy.Hostlink, false},
	"approvals.decide": {policy.Hostlink, false}, "reload": {policy.Hostlink, false},
}

// TestEveryOperationIsComplete: every operation the daemon registers has a
// class (the one its kind of action falls in), a description, a transport
// set, an input schema that resolves and a request type that describes
// itself; the local user's controls are offered on the control channel
// only.
func TestEveryOperationIsComplete(t *testing.T) {
	d, _ := openFull(t)
	all := d.Registry.Ops()
	for name := range wantClass {
		if _, ok := d.Registry.Lookup(name); !ok {
			t.Errorf("%s is not registered", name)
		}
	}
	for _, op := range all {
		if want, ok := wantClass[op.Name]; ok && (op.Class != want.class || op.NoAsk != want.noAsk) {
			t.Errorf("%s: class %s, no ask %v; want %s, %v", op.Name, op.Class, op.NoAsk, want.class, want.noAsk)
		}
		if !policy.Known(op.Class) || op.Description == "" || op.Title == "" || len(op.Transports) == 0 || !op.Describes {
			t.Errorf("%s: class %q, description %q, title %q, transports %v, describes itself %v",
				op.Name, op.Class, op.Description, op.Title, op.Transports, op.Describes)
		}
		if err := op.CheckSchema(); err != nil {
			t.Errorf("%s: input schema: %v", op.Name, err)
		}
		local := op.Capability == ops.Local
		if local != (len(op.Transports) == 1 && op.Offered(audit.IPC)) {
			t.Errorf("%s: capability %s, transports %v", op.Name, op.Capability, op.Transports)
		}
	}
}

// TestServedRegistriesAreAssembled: every registry the daemon serves (the
// configured workdirs', the link's control connection's, each platform
// session's) came from assemble and is sealed against later registration,
// and a session's leaves with it.
func TestServedRegistriesAreAssembled(t *testing.T) {
	d, home := openFull(t)
	lo, err := d.LinkOptions(LinkOptions{URL: "ws://127.0.0.1:1/ws"})
	if err != nil {
		t.Fatal(err)
	}
	rt, err := lo.NewRuntime(filepath.Join(home, "w"))
	if err != nil {
		t.Fatal(err)
	}
	for name, reg := range map[string]*ops.Registry{"workdirs": d.Registry, "link control": lo.Control, "session": rt.Registry} {
		if !d.assembled.has(reg) || !reg.Sealed() {
			t.Errorf("%s registry: assembled %v, sealed %v", name, d.assembled.has(reg), reg.Sealed())
		}
	}
	// Same registrations everywhere: a session has every operation of
	// the configured workdirs' registry.
	if a, b := len(d.Registry.Ops()), len(rt.Registry.Ops()); a != b {
		t.Errorf("the session registry has %d operations, the workdirs' %d", b, a)
	}
	rt.Close()
	if d.assembled.has(rt.Registry) {
		t.Error("a closed session's registry is still kept")
	}
}

// TestSessionRegistryHonoursWriterLease: a platform session whose folder is
// a configured workdir (or inside one) cannot write beside an agent task
// writing there, as the configured workdirs' registry cannot: the same
// writer lease guards both.
func TestSessionRegistryHonoursWriterLease(t *testing.T) {
	d, home := openFull(t)
	w := filepath.Join(home, "w")
	os.MkdirAll(filepath.Join(w, "sub"), 0o755)
	other := filepath.Join(home, "other")
	os.MkdirAll(other, 0o755)
	writer, err := d.Agents.Leases().Writer("w", lease.Guard{TaskID: "t1", Owner: "test", PID: os.Getpid(), Started: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	write := func(reg *ops.Registry, transport audit.Transport) errcode.Code {
		_, err := reg.Call(context.Background(), ops.Caller{Transport: transport}, "write_file", []byte(`{"path":"x.txt","content":"x"}`), nil)
		return errcode.CodeOf(err)
	}
	if c := write(d.Registry, audit.MCPStdio); c != lease.CodeBusy {
		t.Errorf("the workdirs' registry beside a writer: %q", c)
	}
	for _, root := range []string{w, filepath.Join(w, "sub")} {
		rt, err := d.SessionRuntime(root)
		if err != nil {
			t.Fatal(err)
		}
		if c := write(rt.Registry, audit.Link); c != lease.CodeBusy {
			t.Errorf("a session on %s beside a writer: %q", root, c)
		}
		rt.Close()
	}
	rt, err := d.SessionRuntime(other)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	if c := write(rt.Registry, audit.Link); c != "" {
		t.Errorf("a session elsewhere: %q", c)
	}
	writer.Release()
	if c := write(d.Registry, audit.MCPStdio); c != "" {
		t.Errorf("after the writer: %q", c)
	}
}

// TestSessionSeesOnlyItsCommands: the command output store is the
// daemon's, but a registry sees only the commands run in its own
// workdirs: a platform session (on another folder) cannot list, read,
// kill or reuse by idempotency key the command a local client ran in a
// configured workdir (whose output may be anything the user approved for
// that client), nor the local clients the session's; the web console,
// the user's, sees both.
func TestSessionSeesOnlyItsCommands(t *testing.T) {
	d, home := openFull(t)
	other := filepath.Join(home, "other")
	os.MkdirAll(other, 0o755)
	rt, err := d.SessionRuntime(other)
	if err != nil {
		t.Fatal(err)
	}
	defer rt.Close()
	call := func(reg *ops.Registry, tr audit.Transport, op, args string) (map[string]any, errcode.Code) {
		out, err := reg.Call(context.Background(), ops.Caller{Transport: tr}, op, []byte(args), nil)
		var m map[string]any
		b, _ := json.Marshal(out)
		json.Unmarshal(b, &m)
		return m, errcode.CodeOf(err)
	}
	local, code := call(d.Registry, audit.MCPStdio, "run_command", `{"workdir":"w","command":"echo the-local-secret","idempotency_key":"k1"}`)
	if code != "" {
		t.Fatalf("local run_command: %q", code)
	}
	mine, code := call(rt.Registry, audit.Link, "run_command", `{"command":"echo the-session-output"}`)
	if code != "" {
		t.Fatalf("session run_command: %q", code)
	}
	ids := func(reg *ops.Registry, tr audit.Transport) []string {
		m, code := call(reg, tr, "list_commands", `{}`)
		if code != "" {
			t.Fatalf("list_commands: %q", code)
		}
		var out []string
		for _, c := range m["commands"].([]any) {
			out = append(out, c.(map[string]any)["capture_id"].(string))
		}
		return out
	}
	localID, sessionID := local["capture_id"].(string), mine["capture_id"].(string)
	if got := ids(rt.Registry, audit.Link); !slices.Equal(got, []string{sessionID}) {
		t.Errorf("the session lists %v, want only its own %s", got, sessionID)
	}
	if got := ids(d.Registry, audit.MCPStdio); !slices.Equal(got, []string{localID}) {
		t.Errorf("a local client lists %v, want only %s", got, localID)
	}
	if got := ids(d.Registry, audit.Console); len(got) != 2 {
		t.Errorf("the console lists %v, want both", got)
	}
	for _, c := range []struct {
		reg *ops.Registry
		tr  audit.Transport
		id  string
	}{
		{rt.Registry, audit.Link, localID}, {d.Registry, audit.MCPStdio, sessionID},
	} {
		for _, op := range []string{"command_status", "kill_command"} {
			if _, code := call(c.reg, c.tr, op, `{"capture_id":"`+c.id+`"}`); code != capture.CodeNotFound {
				t.Errorf("%s %s of another's command: %q, want %s", c.tr, op, code, capture.CodeNotFound)
			}
		}
		if _, code := call(c.reg, c.tr, "read_command_output", `{"capture_id":"`+c.id+`","stream":"stdout","text":true}`); code != capture.CodeNotFound {
			t.Errorf("%s read_command_output of another's command: %q, want %s", c.tr, code, capture.CodeNotFound)
		}
	}
	if m, code := call(rt.Registry, audit.Link, "run_command", `{"command":"echo the-local-secret","idempotency_key":"k1"}`); code != errcode.Conflict {
		t.Errorf("the session reusing the local idempotency key: %q %v, want CONFLICT", code, m)
	}
	if _, code := call(d.Registry, audit.Console, "read_command_output", `{"capture_id":"`+sessionID+`","stream":"stdout","text":true}`); code != "" {
		t.Errorf("the console reading the session's command: %q", code)
	}
}
