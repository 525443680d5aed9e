package daemon

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/approvals"
	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/ops/opstest"
	"github.com/hostlink/hostlink/internal/policy"
)

// allowAll puts a policy allowing everything in force, for tests of the
// operations rather than of the policy.
func allowAll(d *Daemon) { d.pol.engine.Set(policy.AllowAll()) }

// TestWorkdirInsideOwnDirsRefused: a workdir inside hostlink's state or
// configuration stops start-up.
func TestWorkdirInsideOwnDirsRefused(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOSTLINK_HOME", home)
	for _, sub := range []string{"state", "config"} {
		dir := filepath.Join(home, sub, "inner")
		os.MkdirAll(dir, 0o700)
		cfg := filepath.Join(home, "c.toml")
		os.WriteFile(cfg, []byte("[[workdirs]]\nalias = \"x\"\npath = '"+dir+"'\n"), 0o600)
		if d, err := Open(Options{ConfigPath: cfg}); err == nil {
			d.Close()
			t.Fatalf("a workdir inside %s opened", sub)
		} else if !strings.Contains(err.Error(), "hostlink's own directory") {
			t.Fatalf("%s: %v", sub, err)
		}
	}
}

// TestReload: a valid file's policy takes effect and is audited; an
// invalid one changes nothing and is audited as refused.
func TestReload(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOSTLINK_HOME", home)
	cfg := filepath.Join(home, "c.toml")
	os.WriteFile(cfg, []byte("[policy]\nfiles_write = \"deny\"\n"), 0o600)
	d, err := Open(Options{ConfigPath: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	write := func() errcode.Code {
		_, err := d.Registry.Call(context.Background(), ops.Caller{Transport: audit.MCPStdio}, "write_file", []byte(`{"path":"a","content":"x"}`), nil)
		return errcode.CodeOf(err)
	}
	if c := write(); c != policy.CodeDenied {
		t.Fatalf("under deny: %q", c)
	}
	os.WriteFile(cfg, []byte("[policy]\nfiles_write = \"allow\"\n"), 0o600)
	if _, err := d.Reload("test"); err != nil {
		t.Fatal(err)
	}
	if c := write(); c != "" {
		t.Fatalf("after reload: %q", c)
	}
	os.WriteFile(cfg, []byte("[policy]\nfiles_write = \"sometimes\"\n"), 0o600)
	if _, err := d.Reload("test"); err == nil {
		t.Fatal("an invalid policy was loaded")
	}
	if c := write(); c != "" {
		t.Fatalf("after a refused reload: %q", c)
	}
	lines, _ := audit.Tail(d.Dirs.Audit, 20)
	var ok, refused int
	for _, l := range lines {
		if l.Op == "policy_reload" {
			if l.Code == "OK" {
				ok++
			} else {
				refused++
			}
		}
	}
	if ok != 1 || refused != 1 {
		t.Fatalf("reload records: %d ok, %d refused", ok, refused)
	}
}

// TestOwnFilesThroughTheDaemon: the configuration file named with
// --config and the platform token file, wherever they are, are
// unreachable to file operations, and the unit `hostlink install` would
// write, in a workdir holding the home directory, is read-only (issue
// 37, finding 5). On the default policy, which asks before writes, the
// refusal comes before anything is asked: there is nothing to approve.
func TestOwnFilesThroughTheDaemon(t *testing.T) {
	for _, allow := range []bool{false, true} {
		name := "default policy"
		if allow {
			name = "allow all"
		}
		t.Run(name, func(t *testing.T) { testOwnFilesThroughTheDaemon(t, allow) })
	}
}

func testOwnFilesThroughTheDaemon(t *testing.T, allow bool) {
	t.Setenv("HOSTLINK_HOME", t.TempDir())
	home, _ := filepath.EvalSymlinks(t.TempDir())
	t.Setenv("HOME", home)
	t.Setenv("USERPROFILE", home)
	t.Setenv("XDG_CONFIG_HOME", "")
	cfg := filepath.Join(home, "hostlink.toml")
	token := filepath.Join(home, "platform.token")
	os.WriteFile(cfg, []byte("[link]\ntoken_file = '"+token+"'\n\n[[workdirs]]\nalias = \"home\"\npath = '"+home+"'\n"), 0o600)
	os.WriteFile(token, []byte("PLATFORM-TOKEN"), 0o600)
	unit := ""
	switch runtime.GOOS {
	case "linux":
		unit = ".config/systemd/user/hostlink.service"
	case "darwin":
		unit = "Library/LaunchAgents/dev.hostlink.serve.plist"
	}
	if unit != "" {
		os.MkdirAll(filepath.Dir(filepath.Join(home, unit)), 0o755)
		os.WriteFile(filepath.Join(home, unit), []byte("UNIT"), 0o644)
	}
	d, err := Open(Options{ConfigPath: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if allow {
		allowAll(d)
	}
	call := func(op string, args map[string]any) errcode.Code {
		_, code := opstest.Call(context.Background(), d.Registry, op, args)
		return code
	}
	for _, f := range []string{"hostlink.toml", "platform.token"} {
		if code := call("read_file", map[string]any{"path": f}); code != errcode.PathOutsideRoot {
			t.Errorf("read_file %s: %q, want PATH_OUTSIDE_ALLOWED_ROOT", f, code)
		}
		if code := call("write_file", map[string]any{"path": f, "content": "x"}); code != errcode.PathOutsideRoot {
			t.Errorf("write_file %s: %q, want PATH_OUTSIDE_ALLOWED_ROOT", f, code)
		}
	}
	if unit != "" {
		if code := call("read_file", map[string]any{"path": unit}); code != "" {
			t.Errorf("read_file of the unit: %q", code)
		}
		if code := call("write_file", map[string]any{"path": unit, "content": "EVIL"}); code != errcode.ReadOnly {
			t.Errorf("write_file of the unit: %q, want READ_ONLY", code)
		}
		if b, _ := os.ReadFile(filepath.Join(home, unit)); string(b) != "UNIT" {
			t.Errorf("the unit is now %q", b)
		}
	}
	if b, _ := os.ReadFile(token); string(b) != "PLATFORM-TOKEN" {
		t.Errorf("the token file is now %q", b)
	}
	if pending := d.Approvals().List(true); len(pending) != 0 {
		t.Errorf("asked about what would be refused: %+v", pending)
	}
}

// TestReloadNamesWhatNeedsARestart: a reload applies [policy] only; the
// other keys that changed since the start (not those a flag set) are
// named, in the result and the audit record.
func TestReloadNamesWhatNeedsARestart(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOSTLINK_HOME", home)
	cfg := filepath.Join(home, "c.toml")
	os.WriteFile(cfg, []byte("[server]\nlisten = \"127.0.0.1:7717\"\n"), 0o600)
	// --listen differs from the file: not a change of the file.
	d, err := Open(Options{ConfigPath: cfg, Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	os.WriteFile(cfg, []byte("[server]\nlisten = \"127.0.0.1:7717\"\n[policy]\nfiles_write = \"allow\"\n"), 0o600)
	if r, err := d.Reload("test"); err != nil || len(r.RestartNeeded) != 0 {
		t.Fatalf("a policy change: %+v, %v", r, err)
	}
	os.WriteFile(cfg, []byte("[server]\nlisten = \"127.0.0.1:7718\"\n[commands]\nenabled = true\n[policy]\nfiles_write = \"allow\"\n"), 0o600)
	r, err := d.Reload("test")
	if err != nil || strings.Join(r.RestartNeeded, " ") != "server.listen commands.enabled" {
		t.Fatalf("listen and commands changed: %+v, %v", r, err)
	}
	lines, _ := audit.Tail(d.Dirs.Audit, 1)
	if got := fmt.Sprint(lines[0].Details["restart_needed"]); lines[0].Op != "policy_reload" || got != "[server.listen commands.enabled]" {
		t.Fatalf("audit record %s %v", lines[0].Op, lines[0].Details)
	}
}

// TestPlatformFolderApprovalBindsTheFolder: approving a folder for
// platform sessions approves that directory, not its path: once another
// directory has been put at the path (the approved one moved away), a
// session there is asked about again (#37 item 4, for folders).
func TestPlatformFolderApprovalBindsTheFolder(t *testing.T) {
	home := t.TempDir()
	if h, err := filepath.EvalSymlinks(home); err == nil {
		home = h
	}
	t.Setenv("HOSTLINK_HOME", home)
	cfg := filepath.Join(home, "c.toml")
	os.WriteFile(cfg, []byte("[policy]\nwait_seconds = 1\n"), 0o600)
	d, err := Open(Options{ConfigPath: cfg})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	share := filepath.Join(home, "share")
	os.MkdirAll(share, 0o755)
	open := func() errcode.Code {
		rt, err := d.SessionRuntime(share)
		if err == nil {
			rt.Close()
		}
		return errcode.CodeOf(err)
	}
	if c := open(); c != approvals.CodePending {
		t.Fatalf("first session: %q, want it asked", c)
	}
	p := d.Approvals().List(true)
	if len(p) != 1 {
		t.Fatalf("pending: %+v", p)
	}
	if _, err := d.Approvals().Decide(p[0].ID, true, "tester", audit.IPC); err != nil {
		t.Fatal(err)
	}
	if c := open(); c != "" {
		t.Fatalf("the approved folder: %q", c)
	}
	if c := open(); c != "" {
		t.Fatalf("the approved folder again: %q", c)
	}
	// Another directory at the same path.
	if err := os.Rename(share, share+".old"); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(share, 0o755)
	if c := open(); c != approvals.CodePending {
		t.Errorf("another directory at the approved path: %q, want it asked", c)
	}
}
