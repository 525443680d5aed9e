package main

import (
	"encoding/json"
	"html"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/agent/agentcli"
	"github.com/hostlink/hostlink/internal/agent/agenttest"
	"github.com/hostlink/hostlink/internal/agent/claude"
	"github.com/hostlink/hostlink/internal/agent/fakemodel"
	"github.com/hostlink/hostlink/internal/approvals"
	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/tstest"
)

// TestClaudeCodeIsNamed: Claude Code, set up with `claude mcp add` against
// `hostlink mcp`, passes `claude mcp list`'s health check (the MCP
// handshake), and a write_file it makes (`claude -p` against a local fake
// model whose first answer is that tool call) is held on the default
// policy; its approval, its audit record and its console row name
// "claude-code", the client Claude Code declares.
func TestClaudeCodeIsNamed(t *testing.T) {
	t.Parallel()
	bin := build(t)
	home, env := defaultEnv(t)
	_, mcpURL := startServe(t, bin, env)

	model := fakemodel.Messages(t, func(r *fakemodel.Request) fakemodel.Reply {
		if len(r.Results()) > 0 {
			return fakemodel.Reply{Text: "written"}
		}
		return fakemodel.Reply{Calls: []fakemodel.Call{{Name: "mcp__hostlink__write_file", Args: map[string]any{"path": "from-claude.txt", "content": "hello from claude code"}}}}
	})
	cc := claudeWithHostlink(t, bin, home, model.URL)

	p := cc("-p", "write the file", "--output-format", "json", "--allowedTools", "mcp__hostlink__write_file")
	var out syncBuffer
	p.Stdout, p.Stderr = &out, &out
	if err := p.Start(); err != nil {
		t.Fatal(err)
	}
	done, exited := make(chan error, 1), make(chan struct{})
	go func() { done <- p.Wait(); close(exited) }()
	t.Cleanup(func() { p.Process.Kill(); <-exited })

	var held approvals.Approval
	tstest.WaitFor(t, 3*time.Minute, "Claude Code's write_file held for approval", func() bool {
		for _, ap := range approvalsList(t, env, bin) {
			if ap.Action.Op == "write_file" {
				held = ap
				return true
			}
		}
		select {
		case err := <-done:
			t.Fatalf("claude -p ended before its write was held: %v\n%s", err, out.String())
		default:
		}
		return false
	})
	if !strings.HasPrefix(held.Action.Peer, "claude-code ") {
		t.Errorf("the approval names its caller %q, want claude-code …", held.Action.Peer)
	}
	if o, err := run(t, env, bin, "approvals", "approve", held.ID); err != nil {
		t.Fatalf("approve: %v %s", err, o)
	}
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("claude -p: %v\n%s", err, out.String())
		}
	case <-time.After(3 * time.Minute):
		t.Fatalf("claude -p did not finish after the approval:\n%s", out.String())
	}
	if b, err := os.ReadFile(filepath.Join(home, "workspace", "from-claude.txt")); err != nil || string(b) != "hello from claude code" {
		t.Fatalf("the approved write: %q %v\nclaude said:\n%s", b, err, out.String())
	}

	lines, err := audit.Tail(filepath.Join(home, "audit"), 50)
	if err != nil {
		t.Fatal(err)
	}
	var rec *audit.Line
	for i, l := range lines {
		if l.Op == "write_file" && l.Code == "OK" {
			rec = &lines[i]
		}
	}
	if rec == nil || !strings.HasPrefix(rec.Peer, "claude-code ") || rec.Transport != audit.MCPStdio {
		t.Fatalf("the write's audit record: %+v", rec)
	}

	// The console's activity row.
	hc, _ := consoleLogin(t, env, bin)
	base := strings.TrimSuffix(mcpURL, "mcp") + "console/"
	resp, err := hc.Get(base + "activity")
	if err != nil {
		t.Fatal(err)
	}
	page, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	var row string
	for _, r := range strings.Split(html.UnescapeString(string(page)), "<tr") {
		if strings.Contains(r, "<td>write_file ") && strings.Contains(r, `<span class="ok">OK</span>`) {
			row = r
		}
	}
	if !strings.Contains(row, `<td class="client">claude-code `) {
		t.Fatalf("the console's activity row of the write does not name claude-code: %q\n%s", row, page)
	}
	var res map[string]any
	json.Unmarshal([]byte(lastLineOf([]byte(out.String()))), &res)
	t.Logf("claude -p: %v", res["result"])
}

// claudeTestEnv is the environment of a Claude Code CLI with its HOME and
// configuration under dir, talking to the fake model at modelURL. Its
// print mode does not wait for MCP servers to connect unless told to
// (MCP_CONNECTION_NONBLOCKING=false): a model that answers faster than
// `hostlink mcp` starts (under -race) would call tools Claude Code has
// not listed yet. MCP_TIMEOUT bounds that wait.
func claudeTestEnv(dir, modelURL string) []string {
	return append(os.Environ(), "HOME="+filepath.Join(dir, "home"), "CLAUDE_CONFIG_DIR="+filepath.Join(dir, "config"),
		"ANTHROPIC_BASE_URL="+modelURL, "ANTHROPIC_API_KEY=test-key",
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1",
		"MCP_CONNECTION_NONBLOCKING=false", "MCP_TIMEOUT=120000")
}

// claudeWithHostlink returns a runner of the real Claude Code CLI in a
// HOME and project of its own, talking to the fake model at modelURL, with
// `hostlink mcp` (HOSTLINK_HOME home) added as its MCP server "hostlink"
// and passing `claude mcp list`'s health check.
func claudeWithHostlink(t *testing.T, bin, home, modelURL string) func(args ...string) *exec.Cmd {
	t.Helper()
	argv, err := agentcli.Find(claude.Program, agenttest.CLIs(t))
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	claudeEnv := append(claudeTestEnv(dir, modelURL), "HOSTLINK_HOME="+home)
	project := filepath.Join(dir, "project")
	os.MkdirAll(project, 0o755)
	cc := func(args ...string) *exec.Cmd {
		c := exec.Command(argv[0], append(argv[1:len(argv):len(argv)], args...)...)
		c.Env, c.Dir = claudeEnv, project
		return c
	}
	if out, err := cc("mcp", "add", "hostlink", "--", bin, "mcp").CombinedOutput(); err != nil {
		t.Fatalf("claude mcp add: %v\n%s", err, out)
	}
	if out, err := cc("mcp", "list").CombinedOutput(); err != nil || !strings.Contains(string(out), "hostlink") || !strings.Contains(string(out), "Connected") {
		t.Fatalf("claude mcp list does not connect to hostlink: %v\n%s", err, out)
	}
	return cc
}

// TestClaudeCodeSeesListings: what Claude Code hands its model for
// list_directory and find_files is the listings' text (a head line of JSON,
// then a line per entry), the shape README documents, not JSON of a
// structured result.
func TestClaudeCodeSeesListings(t *testing.T) {
	t.Parallel()
	bin := build(t)
	home, env := defaultEnv(t)
	ws := filepath.Join(home, "workspace")
	os.MkdirAll(filepath.Join(ws, "src"), 0o755)
	os.WriteFile(filepath.Join(ws, "notes.md"), []byte("notes\n"), 0o644)
	os.WriteFile(filepath.Join(ws, "src", "main.go"), []byte("package main\n"), 0o644)
	startServe(t, bin, env)

	seen := make(chan []fakemodel.Entry, 1)
	model := fakemodel.Messages(t, func(r *fakemodel.Request) fakemodel.Reply {
		if res := r.Results(); len(res) >= 2 {
			select {
			case seen <- res:
			default:
			}
			return fakemodel.Reply{Text: "listed"}
		}
		return fakemodel.Reply{Calls: []fakemodel.Call{
			{Name: "mcp__hostlink__list_directory", Args: map[string]any{"path": "."}},
			{Name: "mcp__hostlink__find_files", Args: map[string]any{"path": ".", "pattern": "**/*.go"}},
		}}
	})
	cc := claudeWithHostlink(t, bin, home, model.URL)
	p := cc("-p", "list the files", "--output-format", "json", "--allowedTools", "mcp__hostlink__list_directory,mcp__hostlink__find_files")
	// Killed if it hangs, rather than holding the test binary's timeout.
	kill := time.AfterFunc(3*time.Minute, func() { p.Process.Kill() })
	out, err := p.CombinedOutput()
	kill.Stop()
	if err != nil {
		t.Fatalf("claude -p: %v\n%s", err, out)
	}
	var results []fakemodel.Entry
	select {
	case results = <-seen:
	default:
		t.Fatalf("the model never got both results; claude said:\n%s", out)
	}
	// The calls may run in either order: the results are told apart by
	// what they list.
	want := map[string][]string{
		"list_directory": {`"count":2`, "\nf notes.md\n", "\nd src"},
		"find_files":     {`"count":1`, "\nf src/main.go"},
	}
	for i, r := range results[:2] {
		head, _, _ := strings.Cut(r.Text, "\n")
		var h map[string]any
		if err := json.Unmarshal([]byte(head), &h); err != nil || h["entries"] != nil {
			t.Errorf("result %d's first line is not the listing's head: %q (%v)", i, head, err)
		}
		op := "find_files"
		if strings.Contains(r.Text, "notes.md") {
			op = "list_directory"
		}
		for _, w := range want[op] {
			if !strings.Contains(r.Text, w) {
				t.Errorf("%s's result lacks %q:\n%s", op, w, r.Text)
			}
		}
	}
}
