package runtimes_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/agent"
	"github.com/hostlink/hostlink/internal/agent/agenttest"
	"github.com/hostlink/hostlink/internal/agent/claude"
	"github.com/hostlink/hostlink/internal/agent/codex"
	"github.com/hostlink/hostlink/internal/tstest"
)

// The stub runtime is this test binary, copied into an npm package layout
// as the platform binary of @openai/codex or @anthropic-ai/claude-code. It
// speaks just enough of each protocol for one turn: an approval, a reply
// line far over 64 KiB, the end of the turn; and it leaves a grandchild
// running, which must end with the session's process tree. It runs on
// every OS, and under Wine as a Windows program.
const stubEnv = "HOSTLINK_RUNTIME_STUB"

func TestMain(m *testing.M) {
	switch os.Getenv(stubEnv) {
	case "":
		os.Exit(m.Run())
	case "sleep":
		time.Sleep(10 * time.Minute)
		os.Exit(0)
	}
	os.Exit(stub(os.Args[1:], os.Stdin, os.Stdout))
}

var stubText = strings.Repeat("stub reply ", 12<<10) // 132 KiB

func stub(args []string, in io.Reader, out io.Writer) int {
	joined := strings.Join(args, " ")
	codexMode := strings.Contains(filepath.Base(os.Args[0]), "codex")
	switch {
	case joined == "--version" && codexMode:
		fmt.Fprintln(out, "codex-cli "+codex.TestedVersion)
		return 0
	case joined == "--version":
		fmt.Fprintln(out, claude.TestedVersion+" (Claude Code)")
		return 0
	case joined == "login status":
		fmt.Fprintln(out, "Logged in using an API key")
		return 0
	case joined == "auth status":
		fmt.Fprintln(out, `{"loggedIn":true}`)
		return 0
	}
	// The first session process ends before it answers initialize, as a
	// CLI killed during its start-up does; the adapter starts it again.
	if f := os.Getenv("HOSTLINK_STUB_DIE_ONCE"); f != "" {
		if _, err := os.Stat(f); err != nil {
			os.WriteFile(f, nil, 0o600)
			return 3
		}
	}
	// The grandchild that must not outlive the session.
	if f := os.Getenv("HOSTLINK_STUB_PIDFILE"); f != "" {
		c := exec.Command(os.Args[0])
		c.Env = append(os.Environ(), stubEnv+"=sleep")
		if c.Start() == nil {
			os.WriteFile(f+"."+strconv.Itoa(os.Getpid()), []byte(strconv.Itoa(c.Process.Pid)), 0o600)
		}
	}
	enc := json.NewEncoder(out)
	sc := bufio.NewScanner(in)
	sc.Buffer(nil, 1<<20)
	if codexMode {
		return stubCodex(sc, enc)
	}
	return stubStreamJSON(sc, enc)
}

// stubCodex is a codex app-server for one thread and turn. Its own request
// ids start at 0, as Codex's do, colliding with the client's.
func stubCodex(sc *bufio.Scanner, enc *json.Encoder) int {
	for sc.Scan() {
		var m struct {
			ID     json.RawMessage `json:"id"`
			Method string          `json:"method"`
			Result json.RawMessage `json:"result"`
		}
		json.Unmarshal(sc.Bytes(), &m)
		reply := func(result any) { enc.Encode(map[string]any{"id": m.ID, "result": result}) }
		switch {
		case m.Method == "initialize":
			reply(map[string]any{"userAgent": "stub/" + codex.TestedVersion, "codexHome": "x", "platformFamily": "x", "platformOs": "x"})
		case m.Method == "model/list":
			reply(map[string]any{"data": []any{map[string]any{"id": "stub-model", "displayName": "Stub", "isDefault": true}}})
		case m.Method == "thread/start":
			reply(map[string]any{"thread": map[string]any{"id": "thread-1", "turns": []any{}}})
		case m.Method == "turn/start":
			reply(map[string]any{"turn": map[string]any{"id": "turn-1", "items": []any{}, "status": "inProgress"}})
			enc.Encode(map[string]any{"method": "turn/started", "params": map[string]any{"threadId": "thread-1", "turn": map[string]any{"id": "turn-1"}}})
			enc.Encode(map[string]any{"id": 0, "method": "item/commandExecution/requestApproval", "params": map[string]any{
				"threadId": "thread-1", "turnId": "turn-1", "itemId": "item-1", "command": "echo hi", "startedAtMs": 1,
				"availableDecisions": []any{"accept", map[string]any{"acceptWithExecpolicyAmendment": map[string]any{"execpolicy_amendment": []string{"echo"}}}, "cancel"}}})
		case m.Method == "" && string(m.ID) == "0":
			var res struct{ Decision any }
			json.Unmarshal(m.Result, &res)
			d, _ := json.Marshal(res.Decision)
			text := "decision " + string(d) + " " + stubText
			enc.Encode(map[string]any{"method": "item/completed", "params": map[string]any{"threadId": "thread-1", "turnId": "turn-1",
				"item": map[string]any{"type": "agentMessage", "id": "msg-1", "text": text}}})
			enc.Encode(map[string]any{"method": "turn/completed", "params": map[string]any{"threadId": "thread-1",
				"turn": map[string]any{"id": "turn-1", "items": []any{}, "status": "completed"}}})
		case m.ID != nil && m.Method != "":
			reply(map[string]any{})
		}
	}
	return 0
}

// stubStreamJSON is claude -p with stream-json for one turn.
func stubStreamJSON(sc *bufio.Scanner, enc *json.Encoder) int {
	const sid = "0b7e3f9c-0000-4000-8000-000000000001"
	for sc.Scan() {
		var m struct {
			Type      string          `json:"type"`
			RequestID string          `json:"request_id"`
			Request   json.RawMessage `json:"request"`
			Response  struct {
				RequestID string         `json:"request_id"`
				Response  map[string]any `json:"response"`
			} `json:"response"`
		}
		json.Unmarshal(sc.Bytes(), &m)
		switch m.Type {
		case "control_request":
			enc.Encode(map[string]any{"type": "control_response", "response": map[string]any{"subtype": "success", "request_id": m.RequestID,
				"response": map[string]any{"models": []any{map[string]any{"value": "default", "displayName": "Default"}}}}})
		case "user":
			enc.Encode(map[string]any{"type": "system", "subtype": "init", "session_id": sid})
			enc.Encode(map[string]any{"type": "control_request", "request_id": "perm-1", "request": map[string]any{
				"subtype": "can_use_tool", "tool_name": "Bash", "input": map[string]any{"command": "echo hi"}, "tool_use_id": "toolu_1"}})
		case "control_response":
			text := fmt.Sprint("behavior ", m.Response.Response["behavior"], " ", stubText)
			enc.Encode(map[string]any{"type": "assistant", "session_id": sid, "parent_tool_use_id": nil,
				"message": map[string]any{"id": "msg_1", "role": "assistant", "content": []any{map[string]any{"type": "text", "text": text}}}})
			enc.Encode(map[string]any{"type": "result", "subtype": "success", "is_error": false, "result": text, "session_id": sid})
		}
	}
	return 0
}

// layout copies this test binary into an npm install of package main
// under dir, as the binary rel in its platform package, and returns the
// node_modules directory.
func layout(t *testing.T, dir, main, platformPkg, rel string) string {
	t.Helper()
	nm := filepath.Join(dir, "node_modules")
	self, err := os.ReadFile(os.Args[0])
	if err != nil {
		t.Fatal(err)
	}
	bin := filepath.Join(nm, filepath.FromSlash(platformPkg), filepath.FromSlash(rel))
	os.MkdirAll(filepath.Dir(bin), 0o755)
	if err := os.WriteFile(bin, self, 0o755); err != nil {
		t.Fatal(err)
	}
	os.MkdirAll(filepath.Join(nm, filepath.FromSlash(main)), 0o755)
	os.WriteFile(filepath.Join(nm, filepath.FromSlash(main), "package.json"), []byte(`{"name":"`+main+`"}`), 0o644)
	return nm
}

// stubLayout is an npm install holding the stub as runtime name's
// platform binary; it returns the node_modules directory.
func stubLayout(t *testing.T, name string) string {
	exe := ""
	if runtime.GOOS == "windows" {
		exe = ".exe"
	}
	if name == "codex" {
		triple := map[string]string{"linux/amd64": "x86_64-unknown-linux-musl", "linux/arm64": "aarch64-unknown-linux-musl",
			"darwin/amd64": "x86_64-apple-darwin", "darwin/arm64": "aarch64-apple-darwin",
			"windows/amd64": "x86_64-pc-windows-msvc", "windows/arm64": "aarch64-pc-windows-msvc"}[runtime.GOOS+"/"+runtime.GOARCH]
		return layout(t, t.TempDir(), "@openai/codex", "@openai/codex-"+nodeOS()+"-"+nodeArch(), "vendor/"+triple+"/bin/codex"+exe)
	}
	return layout(t, t.TempDir(), "@anthropic-ai/claude-code", "@anthropic-ai/claude-code-"+nodeOS()+"-"+nodeArch(), "claude"+exe)
}

func nodeArch() string {
	if runtime.GOARCH == "amd64" {
		return "x64"
	}
	return runtime.GOARCH
}

func nodeOS() string {
	if runtime.GOOS == "windows" {
		return "win32"
	}
	return runtime.GOOS
}

// TestStubRuntimes runs a task through the Codex and Claude adapters
// against the stub, found in its npm package layout; each stub's first
// process dies during start-up.
func TestStubRuntimes(t *testing.T) {
	pids := filepath.Join(t.TempDir(), "pid")
	env := func(name string) map[string]string {
		return map[string]string{stubEnv: "1", "HOSTLINK_STUB_PIDFILE": pids + "-" + name, "GORACE": "atexit_sleep_ms=0",
			"HOSTLINK_STUB_DIE_ONCE": pids + "-" + name + "-died"}
	}
	codexNM, claudeNM := stubLayout(t, "codex"), stubLayout(t, "claude")
	var codexRT *codex.Runtime
	e := agenttest.New(t, map[string]agent.Factory{
		"codex": func() (agent.Runtime, error) {
			codexRT = &codex.Runtime{Path: codexNM, Env: env("codex")}
			t.Cleanup(func() { codexRT.Close() })
			return codexRT, nil
		},
		"claude": func() (agent.Runtime, error) { return &claude.Runtime{Path: claudeNM, Env: env("claude")}, nil },
	})
	for _, r := range e.Must("list_agent_runtimes", nil)["runtimes"].([]any) {
		r := r.(map[string]any)
		if r["installed"] != true || r["ready"] != true || r["authenticated"] != true {
			t.Errorf("readiness: %v", r)
		}
	}
	for _, c := range []struct {
		runtime  string
		decision any
		want     string
	}{
		{"codex", map[string]any{"acceptWithExecpolicyAmendment": map[string]any{"execpolicy_amendment": []any{"echo"}}},
			`decision {"acceptWithExecpolicyAmendment":{"execpolicy_amendment":["echo"]}} `},
		{"claude", "accept", "behavior allow "},
	} {
		t.Run(c.runtime, func(t *testing.T) {
			e := e.With(t)
			id := e.Submit(c.runtime, "hello", "workspace-write", nil)
			p := e.Pending(id, "approval")
			e.Must("respond_agent_approval", map[string]any{"task_id": id, "request_id": p["request_id"], "decision": c.decision})
			if got := e.Completed(id); got != c.want+stubText {
				t.Fatalf("result: %.200q", got)
			}
		})
	}
	// A Claude session's process tree ends with its task; the Codex
	// app-server's with the runtime.
	grandchildrenEnd(t, pids+"-claude")
	codexRT.Close()
	grandchildrenEnd(t, pids+"-codex")
}

// grandchildrenEnd waits for the grandchildren the stubs recorded under
// prefix to be gone.
func grandchildrenEnd(t *testing.T, prefix string) {
	t.Helper()
	matches, _ := filepath.Glob(prefix + ".*")
	if len(matches) == 0 {
		t.Fatalf("no stub recorded a grandchild in %s.*", prefix)
	}
	for _, f := range matches {
		b, _ := os.ReadFile(f)
		pid, _ := strconv.Atoi(string(b))
		tstest.WaitFor(t, 30*time.Second, fmt.Sprintf("grandchild %d of a stub to end", pid), func() bool { return !alive(pid) })
	}
}
