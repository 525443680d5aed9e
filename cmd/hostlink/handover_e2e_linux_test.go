package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// TestMCPStdioHandOver: with a daemon running (on the default policy),
// `hostlink mcp` hands the client's own pipes to it: while the session
// runs the daemon holds the client's stdin pipe, calls and a bad line are
// answered as through a copying front end, and the end of the client's
// input ends the session and the front end (exit 0), by when the daemon
// has let go of the pipe.
func TestMCPStdioHandOver(t *testing.T) {
	bin := build(t)
	home := t.TempDir()
	os.MkdirAll(filepath.Join(home, "config"), 0o700)
	if err := os.WriteFile(filepath.Join(home, "config", "config.toml"), []byte(ephemeralListen), 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(os.Environ(), "HOSTLINK_HOME="+home)
	serve, _ := startServe(t, bin, env)
	cmd := exec.Command(bin, "mcp", "--no-start")
	cmd.Env = env
	m := startMCP(t, cmd)
	if res := m.call(1, "list_workdirs", map[string]any{}); !strings.Contains(string(res), `"workdirs"`) {
		t.Fatalf("list_workdirs: %s", res)
	}
	m.send("not JSON")
	if r := m.recv(); r.Error == nil || r.Error.Code != -32700 {
		t.Fatalf("a bad line: %+v", r)
	}
	m.call(2, "list_workdirs", map[string]any{})

	stdin, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/0", cmd.Process.Pid))
	if err != nil || !strings.HasPrefix(stdin, "pipe:") {
		t.Fatalf("the front end's stdin: %q, %v", stdin, err)
	}
	if !holds(t, serve.Process.Pid, stdin) {
		t.Fatalf("the daemon does not hold the client's stdin (%s): the front end copies", stdin)
	}
	m.in.Close()
	if err := cmd.Wait(); err != nil {
		t.Fatalf("hostlink mcp at the end of input: %v", err)
	}
	if holds(t, serve.Process.Pid, stdin) {
		t.Fatalf("the daemon still holds the client's stdin (%s) after the session", stdin)
	}
}

// holds reports whether process pid has a descriptor open on what (a
// /proc fd link target such as "pipe:[123]").
func holds(t *testing.T, pid int, what string) bool {
	dir := fmt.Sprintf("/proc/%d/fd", pid)
	ents, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range ents {
		if l, err := os.Readlink(filepath.Join(dir, e.Name())); err == nil && l == what {
			return true
		}
	}
	return false
}
