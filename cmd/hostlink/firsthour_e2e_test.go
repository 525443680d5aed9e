package main

import (
	"bufio"
	"bytes"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/config"
)

// What a person meets in the first hour, from the command line: every
// message says what happened and what to do, never a Go error.

// TestCallInterrupted: Ctrl+C on a `hostlink call` waiting for approval
// says the call is cancelled (exit 130), not the closed socket's error,
// and the approval it waited for is withdrawn.
func TestCallInterrupted(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("no SIGINT to send to a process on Windows")
	}
	t.Parallel()
	bin := build(t)
	_, env := defaultEnv(t)
	startServe(t, bin, env)
	cmd := exec.Command(bin, "call", "write_file", `{"path":"a.txt","content":"x"}`)
	cmd.Env = env
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(stderr)
	var said bytes.Buffer
	for sc.Scan() {
		said.WriteString(sc.Text() + "\n")
		if strings.Contains(sc.Text(), "approv") {
			break // it waits for the approval
		}
	}
	cmd.Process.Signal(syscall.SIGINT)
	for sc.Scan() {
		said.WriteString(sc.Text() + "\n")
	}
	err := cmd.Wait()
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 130 {
		t.Errorf("exit: %v", err)
	}
	if s := said.String(); !strings.Contains(s, "interrupted: the call is cancelled") || strings.Contains(s, "closed network connection") {
		t.Errorf("stderr:\n%s", s)
	}
	out, _ := run(t, env, bin, "approvals", "list", "--all")
	if !strings.Contains(out, "abandoned") {
		t.Errorf("the approval the call waited for:\n%s", out)
	}
}

// TestReloadSaysWhatNeedsARestart: `hostlink reload` after a change to
// [server] listen names it as waiting for a restart.
func TestReloadSaysWhatNeedsARestart(t *testing.T) {
	t.Parallel()
	bin := build(t)
	home, env := defaultEnv(t)
	startServe(t, bin, env)
	cfg := filepath.Join(home, "config", "config.toml")
	if err := os.WriteFile(cfg, []byte("[server]\nlisten = \"127.0.0.1:1\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	out, err := run(t, env, bin, "reload")
	if err != nil || !strings.Contains(out, "policy reloaded") || !strings.Contains(out, "not applied: server.listen changed too, which takes a restart") {
		t.Fatalf("reload: %v\n%s", err, out)
	}
}

// TestLogsBeforeAnyDaemon: `hostlink logs` where no daemon ran says so,
// and fails.
func TestLogsBeforeAnyDaemon(t *testing.T) {
	t.Parallel()
	bin := build(t)
	_, env := defaultEnv(t)
	out, err := run(t, env, bin, "logs")
	if err == nil || !strings.Contains(out, "no log at ") || !strings.Contains(out, "no hostlink daemon has run") {
		t.Fatalf("logs: %v\n%s", err, out)
	}
}

// TestMCPWithBadConfig: `hostlink mcp` whose daemon cannot start says
// what the daemon said, in words.
func TestMCPWithBadConfig(t *testing.T) {
	t.Parallel()
	bin := build(t)
	home, env := defaultEnv(t)
	if err := os.WriteFile(filepath.Join(home, "config", "config.toml"), []byte("[server]\nlisen = \"x\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "mcp")
	cmd.Env = env
	cmd.Stdin = strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}` + "\n")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	done := make(chan error, 1)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { done <- cmd.Wait() }()
	select {
	case <-done:
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		t.Fatal("hostlink mcp did not end")
	}
	s := stderr.String()
	for _, want := range []string{"which ended (exit status 1) before serving", `unknown key "server.lisen" (did you mean "server.listen"?)`, "hostlink serve"} {
		if !strings.Contains(s, want) {
			t.Errorf("stderr lacks %q:\n%s", want, s)
		}
	}
}

// TestDefaultsCommand: `hostlink defaults` prints the documented defaults
// that doctor's fixes point to.
func TestDefaultsCommand(t *testing.T) {
	t.Parallel()
	bin := build(t)
	_, env := defaultEnv(t)
	out, err := run(t, env, bin, "defaults")
	if err != nil || out != config.DefaultTOML() {
		t.Fatalf("defaults: %v\n%.200s", err, out)
	}
}
