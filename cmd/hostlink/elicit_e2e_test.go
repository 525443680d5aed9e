package main

import (
	"bufio"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/tstest"
)

// elicitClient runs testdata/mcp_elicit.mjs and returns its events as
// they come.
func elicitClient(t *testing.T, env []string, bin, path, content, answer string) <-chan map[string]any {
	t.Helper()
	modules := tstest.Env(t, "HOSTLINK_NODE_MODULES", ".ci/run installs the MCP TypeScript SDK and sets it")
	dir := t.TempDir()
	script, err := os.ReadFile(filepath.Join("testdata", "mcp_elicit.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "mcp_elicit.mjs"), script, 0o644)
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join(dir, "mcp_elicit.mjs"), bin, path, content, answer)
	cmd.Env = env
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("client stderr: %s", stderr.String())
		}
	})
	events := make(chan map[string]any, 100)
	go func() {
		defer close(events)
		sc := bufio.NewScanner(stdout)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			var ev map[string]any
			if json.Unmarshal(sc.Bytes(), &ev) == nil {
				events <- ev
			}
		}
	}()
	return events
}

// TestApproveInClient: with [policy] approve_in_client = true, a client
// that declared elicitation is asked through elicitation/create (the
// official TypeScript SDK client answering), with the action escaped, and
// its answer is recorded as decided there; with the default (off), or a
// client without the capability, no elicitation is sent and the call
// waits for the local user.
func TestApproveInClient(t *testing.T) {
	t.Parallel()
	bin := build(t)
	tests := []struct {
		name      string
		policy    string
		answer    string
		elicited  bool
		want      string // last event
		wantState string
	}{
		{"on, the client approves", "approve_in_client = true\n", "approve", true, "result", "used"},
		{"on, the client declines", "approve_in_client = true\n", "decline", true, "error", "denied"},
		{"off by default", "", "approve", false, "result", "used"},
		{"on, a client without elicitation", "approve_in_client = true\n", "none", false, "result", "used"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			home := t.TempDir()
			os.MkdirAll(filepath.Join(home, "config"), 0o700)
			cfg := ephemeralListen + "[policy]\nwait_seconds = 1\n" + tt.policy
			if err := os.WriteFile(filepath.Join(home, "config", "config.toml"), []byte(cfg), 0o600); err != nil {
				t.Fatal(err)
			}
			env := append(os.Environ(), "HOSTLINK_HOME="+home)
			stopDaemonAtEnd(t, env, bin)
			events := elicitClient(t, env, bin, "e.txt", "hi\x1b[2J\u202e there\n", tt.answer)
			elicited, last := false, map[string]any(nil)
			guard := time.After(2 * time.Minute)
			for last == nil {
				select {
				case ev, ok := <-events:
					if !ok {
						t.Fatal("the client ended without a result")
					}
					switch ev["event"] {
					case "elicited":
						elicited = true
						msg, _ := ev["message"].(string)
						if !strings.Contains(msg, "write_file") || !strings.Contains(msg, "e.txt") || !strings.Contains(msg, "new file, ") {
							t.Errorf("the prompt does not show the action: %q", msg)
						}
						if strings.ContainsAny(msg, "\x1b\u202e") {
							t.Errorf("the prompt carries control characters unescaped: %q", msg)
						}
					case "pending":
						if !tt.elicited {
							// Nobody in the client decides: the local user does.
							for _, ap := range approvalsList(t, env, bin) {
								run(t, env, bin, "approvals", "approve", ap.ID)
							}
						}
					case "result", "error":
						last = ev
					}
				case <-guard:
					t.Fatal("no result from the client in 2 minutes")
				}
			}
			if elicited != tt.elicited {
				t.Errorf("elicited = %v, want %v", elicited, tt.elicited)
			}
			if last["event"] != tt.want {
				t.Errorf("last event %v, want %s", last, tt.want)
			}
			out, err := run(t, env, bin, "approvals", "list", "--all", "--json")
			if err != nil {
				t.Fatal(err, out)
			}
			var list []struct {
				State      string `json:"state"`
				DecidedBy  string `json:"decided_by"`
				DecidedVia string `json:"decided_via"`
			}
			json.Unmarshal([]byte(out), &list)
			if len(list) != 1 || list[0].State != tt.wantState {
				t.Fatalf("approvals: %s", out)
			}
			wantVia := "ipc"
			if tt.elicited {
				wantVia = "mcp-stdio"
				if !strings.HasPrefix(list[0].DecidedBy, "hostlink-elicit-e2e 1.0.0 (") {
					t.Errorf("decided by %q, want the client", list[0].DecidedBy)
				}
			}
			if list[0].DecidedVia != wantVia {
				t.Errorf("decided via %q, want %q", list[0].DecidedVia, wantVia)
			}
		})
	}
}
