package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/tstest"
)

// runSplit runs hostlink and returns stdout and stderr apart.
func runSplit(t *testing.T, env []string, bin string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

// spaces is a run of spaces.
var spaces = regexp.MustCompile(` +`)

func TestStatusAndCallAgainstServe(t *testing.T) {
	t.Parallel()
	bin := build(t)
	home, env := hostlinkEnv(t)

	out, err := run(t, env, bin, "status")
	if err == nil || !strings.Contains(out, "not running") || !strings.Contains(out, "hostlink serve") {
		t.Fatalf("status with no daemon: %v\n%s", err, out)
	}

	serve, _ := startServe(t, bin, env)
	out, err = run(t, env, bin, "status")
	if err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	for _, want := range []string{
		fmt.Sprintf("running, pid %d", serve.Process.Pid),
		"ipc ", "mcp-http ", "files ready",
		"shell disabled (enable locally with --enable-shell)",
		"workspace " + filepath.Join(home, "workspace"),
		"running commands: none",
	} {
		// Columns are aligned with however many spaces the widest name
		// needs (TestPrintStatusAligns checks the alignment).
		if !strings.Contains(spaces.ReplaceAllString(out, " "), want) {
			t.Errorf("status does not say %q:\n%s", want, out)
		}
	}
	t.Logf("hostlink status:\n%s", out)

	stdout, stderr, err := runSplit(t, env, bin, "status", "--json")
	var st struct {
		PID        int `json:"pid"`
		Transports []struct{ Name, Address string }
		Commands   []any `json:"commands"`
	}
	if err != nil || json.Unmarshal([]byte(stdout), &st) != nil || st.PID != serve.Process.Pid || len(st.Transports) != 3 || st.Commands == nil {
		t.Fatalf("status --json: %v %+v\n%s%s", err, st, stdout, stderr)
	}

	if out, err := run(t, env, bin, "call", "write_file", `{"path":"n/a.txt","content":"hello\n","create_parents":true}`); err != nil {
		t.Fatalf("call write_file: %v\n%s", err, out)
	}
	stdout, stderr, err = runSplit(t, env, bin, "call", "read_file", `{"path":"n/a.txt"}`, "--json")
	var rf struct{ Content string }
	if err != nil || json.Unmarshal([]byte(stdout), &rf) != nil || rf.Content != "hello\n" || strings.Count(stdout, "\n") != 1 {
		t.Fatalf("call read_file --json: %v\n%s%s", err, stdout, stderr)
	}

	stdout, _, err = runSplit(t, env, bin, "call", "read_file", `{"path":"../x"}`, "--json")
	if err == nil || !strings.Contains(stdout, `"code":"PATH_OUTSIDE_ALLOWED_ROOT"`) {
		t.Fatalf("call escaping the workdir: %v\n%s", err, stdout)
	}
	for _, args := range [][]string{{"call", "read_file", `{"path":`}, {"call", "no_such_op"}} {
		if out, err := run(t, env, bin, args...); err == nil || !strings.HasPrefix(out, "hostlink: ") {
			t.Errorf("%v: %v\n%s", args, err, out)
		}
	}

	// Each call was audited with the channel and the measured peer.
	lines, err := audit.Tail(filepath.Join(home, "audit"), 20)
	if err != nil {
		t.Fatal(err)
	}
	var ipcCalls int
	for _, l := range lines {
		if l.Transport == "ipc" && strings.Contains(l.Peer, "pid ") {
			ipcCalls++
		}
	}
	if ipcCalls != 6 {
		t.Errorf("%d ipc calls audited, want 6 (status twice, write, read, escape, unknown op)", ipcCalls)
	}
}

// TestSecondServeRefuses: with a daemon running, another `hostlink serve`
// for the same user and home says so and exits.
func TestSecondServeRefuses(t *testing.T) {
	t.Parallel()
	bin := build(t)
	_, env := hostlinkEnv(t)
	startServe(t, bin, env)
	out, err := run(t, env, bin, "serve", "--listen", "127.0.0.1:0")
	if err == nil || !strings.Contains(out, "already running") {
		t.Fatalf("second serve: %v\n%s", err, out)
	}
}

// TestStaleSocketAfterKill: a daemon killed with SIGKILL leaves its socket
// behind; the next `hostlink serve` proves it stale, replaces it and serves.
func TestStaleSocketAfterKill(t *testing.T) {
	t.Parallel()
	bin := build(t)
	home, env := hostlinkEnv(t)
	first, _ := startServe(t, bin, env)
	if err := first.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	first.Wait()
	if runtime.GOOS != "windows" {
		if _, err := os.Lstat(filepath.Join(home, "run", "hostlink.sock")); err != nil {
			t.Fatalf("no stale socket after SIGKILL: %v", err)
		}
	}
	second, _ := startServe(t, bin, env)
	var out string
	var err error
	if !tstest.Eventually(10*time.Second, func() bool {
		out, err = run(t, env, bin, "status")
		return err == nil && strings.Contains(out, fmt.Sprintf("pid %d", second.Process.Pid))
	}) {
		t.Fatalf("status after restart: %v\n%s", err, out)
	}
}
