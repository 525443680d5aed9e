package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/sandbox"
	"github.com/hostlink/hostlink/internal/tstest"
)

// callErr is `hostlink call op args --json`: the result or the error,
// decoded.
func callErr(t *testing.T, env []string, bin, op, args string) (result map[string]any, e *errcode.Error) {
	t.Helper()
	out, _ := run(t, env, bin, "call", op, args, "--json")
	var r struct {
		Error *errcode.Error `json:"error"`
	}
	line := lastLineOf([]byte(out))
	if err := json.Unmarshal(line, &r); err == nil && r.Error != nil {
		return nil, r.Error
	}
	if err := json.Unmarshal(line, &result); err != nil {
		t.Fatalf("call %s: %v\n%s", op, err, out)
	}
	return result, nil
}

// TestSandboxFailsClosed: on the default configuration (commands turned
// on), where the sandbox cannot be set up (here: its probe has nowhere to
// work), commands are refused with SANDBOX_FAILED and the reason, before
// anyone is asked, and never run unconfined; status, doctor and
// list_workdirs say so plainly; a request to run without the sandbox is
// put to the user in capitals that say the sandbox failed, and runs once
// the user approves.
func TestSandboxFailsClosed(t *testing.T) {
	bin := build(t)
	home, env := defaultEnv(t)
	os.WriteFile(filepath.Join(home, "config", "config.toml"), []byte(ephemeralListen+"[commands]\nenabled = true\n[policy]\nwait_seconds = 1\n"), 0o600)
	// The probe's scratch directory goes below the cache directory, which
	// cannot be created: no mechanism can be probed, so none is trusted.
	notDir := filepath.Join(home, "not-a-directory")
	os.WriteFile(notDir, nil, 0o600)
	env = append(env, "XDG_CACHE_HOME="+filepath.Join(notDir, "cache"))
	serve := exec.Command(bin, "serve", "--listen", "127.0.0.1:0")
	serve.Env = env
	startServeCmd(t, serve)

	st := daemonStatus(t, env, bin)
	if st.Sandbox == nil || st.Sandbox.Mode != sandbox.Failed || st.Sandbox.Reason == "" {
		t.Fatalf("status sandbox %+v, want failed with a reason", st.Sandbox)
	}
	t.Logf("sandbox mode: %s", st.Sandbox)
	out, err := run(t, env, bin, "status")
	if err != nil || !strings.Contains(out, "FAILED: commands are refused, never run unconfined (") ||
		!strings.Contains(out, "the command sandbox cannot be set up here, so commands are refused") {
		t.Fatalf("status: %v\n%s", err, out)
	}
	out, err = run(t, env, bin, "doctor")
	if err == nil || !strings.Contains(out, "FAILED: commands are refused") || !strings.Contains(out, `[commands] sandbox = "off"`) {
		t.Fatalf("doctor (want a failed check naming the way out): %v\n%s", err, out)
	}
	if r, e := callErr(t, env, bin, "list_workdirs", "{}"); e != nil || !strings.HasPrefix(r["command_sandbox"].(string), "FAILED") {
		t.Fatalf("list_workdirs: %v %v", r, e)
	}

	workdir := filepath.Join(home, "workspace")
	ran := filepath.Join(workdir, "ran")
	for _, args := range []string{`{"argv":["touch","ran"]}`, `{"argv":["touch","ran"],"sandbox":"network"}`} {
		_, e := callErr(t, env, bin, "run_command", args)
		if e == nil || e.Code != sandbox.CodeFailed || !strings.Contains(e.Message, st.Sandbox.Reason) || !strings.Contains(e.Message, `sandbox = "off"`) {
			t.Fatalf("run_command %s: %+v, want SANDBOX_FAILED with the reason and the way out", args, e)
		}
	}
	if list := approvalsList(t, env, bin); len(list) != 0 {
		t.Fatalf("the user was asked about a command that cannot run: %+v", list)
	}
	if _, err := os.Stat(ran); err == nil {
		t.Fatal("a command ran unconfined")
	}

	// Asking to run without the sandbox is put to the user, in capitals.
	off := `{"argv":["touch","ran"],"sandbox":"off"}`
	_, e := callErr(t, env, bin, "run_command", off)
	id, _ := e.Details["approval_id"].(string)
	if e == nil || e.Code != "APPROVAL_PENDING" || id == "" {
		t.Fatalf("run_command off: %+v", e)
	}
	out, err = run(t, env, bin, "approvals", "show", id)
	if err != nil || !strings.Contains(out, "OFF: runs UNSANDBOXED") || !strings.Contains(out, "THE SANDBOX CANNOT BE SET UP ON THIS COMPUTER") {
		t.Fatalf("approvals show: %v\n%s", err, out)
	}
	if out, err := run(t, env, bin, "approvals", "approve", id); err != nil {
		t.Fatalf("approve: %v\n%s", err, out)
	}
	if r, e := callErr(t, env, bin, "run_command", off); e != nil || r["sandbox"] != "off (requested by this command)" {
		t.Fatalf("the approved unsandboxed command: %v %+v", r, e)
	}
	if _, err := os.Stat(ran); err != nil {
		t.Fatal("the approved command did not run")
	}
}

// TestSquattedTmpKeepsTheSandbox: another user (nobody) made the name
// the sandbox's temporary directories once lived under, in the daemon's
// shared sticky TMPDIR, first (a 0777 or 0700 directory, a symbolic link,
// a FIFO). The daemon reports the sandbox it measured, not off, and its
// commands run confined, with their temporary directories where only the
// user can create names.
func TestSquattedTmpKeepsTheSandbox(t *testing.T) {
	tstest.Root(t) // it acts as another user
	u, err := user.Lookup("nobody")
	if err != nil {
		tstest.Missing(t, "no user nobody")
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	bin := build(t)
	for _, kind := range []string{"dir-0777", "dir-0700", "symlink", "fifo"} {
		t.Run(kind, func(t *testing.T) {
			shared, err := os.MkdirTemp("", "hostlink-shared-")
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { os.RemoveAll(shared) })
			os.Chmod(shared, 0o777|os.ModeSticky)
			old := filepath.Join(shared, "hostlink-sandbox-"+strconv.Itoa(os.Getuid()))
			var squat *exec.Cmd
			switch kind {
			case "dir-0777":
				squat = exec.Command("sh", "-c", `mkdir "$0" && chmod 0777 "$0"`, old)
			case "dir-0700":
				squat = exec.Command("mkdir", "-m", "0700", old)
			case "symlink":
				squat = exec.Command("ln", "-s", "/", old)
			case "fifo":
				squat = exec.Command("mkfifo", old)
			}
			squat.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}}
			if out, err := squat.CombinedOutput(); err != nil {
				t.Fatalf("squatting as nobody: %v %s", err, out)
			}
			home, env := defaultEnv(t)
			os.WriteFile(filepath.Join(home, "config", "config.toml"), []byte(ephemeralListen+"[commands]\nenabled = true\n[policy]\ncommands = \"allow\"\n"), 0o600)
			env = append(env, "TMPDIR="+shared)
			serve := exec.Command(bin, "serve", "--listen", "127.0.0.1:0")
			serve.Env = env
			startServeCmd(t, serve)
			st := daemonStatus(t, env, bin)
			t.Logf("sandbox mode: %s", st.Sandbox)
			if st.Sandbox == nil || st.Sandbox.Mode != sandbox.Workdir {
				t.Fatalf("with %s squatted the sandbox is %v", old, st.Sandbox)
			}
			secret := filepath.Join(home, "state", "http.token")
			r, e := callErr(t, env, bin, "run_command", `{"command":"echo \"$TMPDIR\" && echo x > \"$TMPDIR/f\" && cat \"$TMPDIR/f\" && cat `+secret+`","shell":"sh"}`)
			if e != nil {
				t.Fatalf("run_command: %+v", e)
			}
			stdout := r["stdout"].(map[string]any)["head"].(string)
			tok, _ := os.ReadFile(secret)
			if r["exit_code"] == 0.0 || !strings.HasSuffix(stdout, "\nx\n") || strings.HasPrefix(stdout, shared) || strings.Contains(stdout, strings.TrimSpace(string(tok))) {
				t.Fatalf("the command ran %v: stdout %q, stderr %v; want its own TMPDIR outside %s, and the token unreadable", r["sandbox"], stdout, r["stderr"], shared)
			}
		})
	}
}
