package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/tstest"
)

// agentHome is a HOSTLINK_HOME whose config enables agents in workdir a
// (workspace-write) with the fake runtime, built as its own program.
func agentHome(t *testing.T) (home string, env []string) {
	t.Helper()
	fake := fakeAgent(t)
	home, env = hostlinkEnv(t)
	env = append(env, fakeRuntimeEnv+"="+fake)
	a := filepath.Join(home, "a")
	os.MkdirAll(a, 0o755)
	os.MkdirAll(filepath.Join(home, "config"), 0o700)
	cfg := "[agents]\nenabled = true\nruntimes = [\"fake\"]\n\n[[workdirs]]\nalias = \"a\"\npath = '" + a + "'\nagent_mode = \"workspace-write\"\n" + allowPolicy
	if err := os.WriteFile(filepath.Join(home, "config", "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	return home, env
}

// callJSON runs `hostlink call OP ARGS --json` and decodes its one line.
func callJSON(t *testing.T, env []string, bin, op, args string) (map[string]any, string) {
	t.Helper()
	stdout, stderr, err := runSplit(t, env, bin, "call", op, args, "--json")
	var m map[string]any
	if jerr := json.Unmarshal([]byte(stdout), &m); jerr != nil {
		t.Fatalf("call %s: %v %v\n%s%s", op, err, jerr, stdout, stderr)
	}
	if e, ok := m["error"].(map[string]any); ok && err != nil {
		return nil, e["code"].(string)
	}
	return m, ""
}

// TestAgentKill9Serve runs a writer task in the real `hostlink serve`, kills
// the daemon with SIGKILL mid-turn, and starts it again: the task is
// reconciled as interrupted, the workdir refuses writes with
// WORKDIR_RECOVERY_REQUIRED until `hostlink agent recover a`, and then
// accepts them.
func TestAgentKill9Serve(t *testing.T) {
	t.Parallel()
	bin := build(t)
	_, env := agentHome(t)
	serve, _ := startServe(t, bin, env)

	task, code := callJSON(t, env, bin, "submit_agent_task", `{"runtime":"fake","workdir":"a","prompt":"say hi\nwrite f.txt x\nsleep 60000","access":"workspace-write"}`)
	if code != "" {
		t.Fatalf("submit: %s", code)
	}
	id := task["task_id"].(string)
	var got map[string]any
	if !tstest.Eventually(30*time.Second, func() bool {
		var code string
		got, code = callJSON(t, env, bin, "get_agent_task", `{"task_id":"`+id+`"}`)
		if code != "" {
			t.Fatalf("get: %s", code)
		}
		return got["turns"].(float64) == 1
	}) {
		t.Fatalf("no turn started: %v", got)
	}
	write := `{"workdir":"a","path":"mine.txt","content":"x"}`
	if _, code := callJSON(t, env, bin, "write_file", write); code != "WORKDIR_BUSY" {
		t.Fatalf("write_file during the turn: %q", code)
	}

	serve.Process.Kill() // SIGKILL: no cleanup at all
	serve.Wait()
	startServe(t, bin, env)
	got, code = callJSON(t, env, bin, "get_agent_task", `{"task_id":"`+id+`"}`)
	if code != "" || got["status"] != "interrupted" || !strings.Contains(got["reason"].(string), "mid-turn") {
		t.Fatalf("the task after a restart: %v %s", got, code)
	}
	for range 2 {
		if _, code := callJSON(t, env, bin, "write_file", write); code != "WORKDIR_RECOVERY_REQUIRED" {
			t.Fatalf("write_file after the crash: %q", code)
		}
	}
	if out, err := run(t, env, bin, "agent", "recover", "a"); err != nil || !strings.Contains(out, id) {
		t.Fatalf("agent recover: %v\n%s", err, out)
	}
	if _, code := callJSON(t, env, bin, "write_file", write); code != "" {
		t.Fatalf("write_file after recovery: %q", code)
	}
}

// TestAgentsWithTypeScriptClient drives the agent operations of the real
// `hostlink serve` with the official MCP TypeScript SDK client over
// Streamable HTTP: submit, idempotency, approval, question, steer, result,
// events, cancel mid-turn, and the writer lease against write_file.
func TestAgentsWithTypeScriptClient(t *testing.T) {
	t.Parallel()
	bin := build(t)
	_, env := agentHome(t)
	_, url := startServe(t, bin, env)
	seen := nodeScript(t, env, "mcp_agent_client.mjs", url, tokenOf(t, env, bin))
	if seen["ok"] != true {
		t.Fatalf("client saw %v", seen)
	}
	t.Logf("TypeScript client: %v events, runtimes %v", seen["events"], seen["runtimes"])
}

// nodeScript runs testdata/NAME with the MCP TypeScript SDK from
// HOSTLINK_NODE_MODULES and returns the JSON object it prints last.
func nodeScript(t *testing.T, env []string, name string, args ...string) map[string]any {
	t.Helper()
	modules := tstest.Env(t, "HOSTLINK_NODE_MODULES", ".ci/run installs the MCP TypeScript SDK and sets it")
	dir := t.TempDir()
	script, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, name), script, 0o644)
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", append([]string{filepath.Join(dir, name)}, args...)...)
	cmd.Env = env
	var stderr strings.Builder
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var seen map[string]any
	if jerr := json.Unmarshal(lastLineOf(out), &seen); jerr != nil || err != nil {
		t.Fatalf("node %s: %v\nstdout: %s\nstderr: %s", name, err, out, stderr.String())
	}
	return seen
}
