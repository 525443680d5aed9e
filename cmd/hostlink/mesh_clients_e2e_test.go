package main

import (
	"encoding/json"
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
	"github.com/hostlink/hostlink/internal/tstest"
)

// fleetMachine is one machine of TestManyMachines' fleet: its name, HOME
// and environment.
type fleetMachine struct {
	name string
	home string
	env  []string
}

// approveWhenHeld waits until machine m holds a write_file of path for
// its user's approval, approves it there with `hostlink approvals
// approve`, and returns it: its peer must name client, the MCP client
// as it named itself to the gateway. A client that ends before (done)
// fails the test with its output.
func approveWhenHeld(t *testing.T, bin string, m fleetMachine, path, client string, done <-chan error, out *syncBuffer) {
	t.Helper()
	var held approvals.Approval
	tstest.WaitFor(t, 3*time.Minute, "the write to "+path+" held on "+m.name, func() bool {
		for _, ap := range approvalsList(t, m.env, bin) {
			if ap.State == approvals.Pending && ap.Action.Op == "write_file" && strings.Contains(ap.Action.Summary, path) {
				held = ap
				return true
			}
		}
		select {
		case err := <-done:
			t.Fatalf("the client ended before its write was held on %s: %v\n%s", m.name, err, out.String())
		default:
		}
		return false
	})
	if !strings.HasPrefix(held.Action.Peer, client+" (") {
		t.Errorf("the approval on %s names its caller %q, want %s (…)", m.name, held.Action.Peer, client)
	}
	if o, err := run(t, m.env, bin, "approvals", "approve", held.ID); err != nil {
		t.Fatalf("approve on %s: %v %s", m.name, err, o)
	}
}

// startClient starts c with its output in the returned buffer; done
// yields its exit once.
func startClient(t *testing.T, c *exec.Cmd) (done chan error, out *syncBuffer) {
	t.Helper()
	out = &syncBuffer{}
	c.Stdout, c.Stderr = out, out
	if err := c.Start(); err != nil {
		t.Fatal(err)
	}
	done, exited := make(chan error, 1), make(chan struct{})
	go func() { done <- c.Wait(); close(exited) }()
	t.Cleanup(func() { c.Process.Kill(); <-exited })
	return done, out
}

// waitExit waits for a client's exit after its write was approved.
func waitExit(t *testing.T, what string, done <-chan error, out *syncBuffer) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("%s: %v\n%s", what, err, out.String())
		}
	case <-time.After(3 * time.Minute):
		t.Fatalf("%s did not finish after the approval:\n%s", what, out.String())
	}
}

// landed checks that the approved write is on m, with content, and on no
// other machine of the fleet.
func landed(t *testing.T, fleet []fleetMachine, m fleetMachine, path, content string) {
	t.Helper()
	if b, err := os.ReadFile(filepath.Join(m.home, "w", path)); err != nil || string(b) != content {
		t.Fatalf("%s on %s: %q %v", path, m.name, b, err)
	}
	for _, o := range fleet {
		if _, err := os.Stat(filepath.Join(o.home, "w", path)); o.name != m.name && err == nil {
			t.Fatalf("the write of %s landed on %s too", path, o.name)
		}
	}
}

// tsWalkThrough is the walk-through with the MCP TypeScript SDK
// (testdata/mesh_client.mjs) over the gateway's Streamable HTTP and
// bearer token: list the machines, read a file on each, search team=a
// at once, and a write on target that waits until its user approves it
// there.
func tsWalkThrough(t *testing.T, bin, url, token string, fleet []fleetMachine, target fleetMachine) {
	modules := tstest.Env(t, "HOSTLINK_NODE_MODULES", ".ci/run installs the MCP TypeScript SDK and sets it")
	dir := t.TempDir()
	script, err := os.ReadFile(filepath.Join("testdata", "mesh_client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "mesh_client.mjs"), script, 0o644)
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, m := range fleet {
		names = append(names, m.name)
	}
	const path, content = "from-ts.txt", "written by the TypeScript SDK\n"
	c := exec.Command("node", filepath.Join(dir, "mesh_client.mjs"), url, token, strings.Join(names, ","), target.name, path, content)
	c.Env = os.Environ()
	done, out := startClient(t, c)
	approveWhenHeld(t, bin, target, path, "hostlink-mesh-e2e 1.0.0", done, out)
	waitExit(t, "the TypeScript client", done, out)
	var seen struct {
		OK     bool              `json:"ok"`
		Online []string          `json:"online"`
		Read   map[string]string `json:"read"`
		Fanout struct {
			OK       int      `json:"ok"`
			Failed   int      `json:"failed"`
			Machines []string `json:"machines"`
		} `json:"fanout"`
		Written int `json:"written"`
	}
	if err := json.Unmarshal(lastLineOf([]byte(out.String())), &seen); err != nil || !seen.OK {
		t.Fatalf("the TypeScript client: %v\n%s", err, out.String())
	}
	if len(seen.Online) != len(fleet) {
		t.Errorf("online: %v", seen.Online)
	}
	for _, m := range fleet {
		if seen.Read[m.name] != "hello from "+m.name+"\n" {
			t.Errorf("read_file on %s: %q", m.name, seen.Read[m.name])
		}
	}
	if f := seen.Fanout; f.OK != 2 || f.Failed != 0 || strings.Join(f.Machines, ",") != "alpha,beta" {
		t.Errorf("fanout over team=a: %+v", f)
	}
	if seen.Written != len(content) {
		t.Errorf("the approved write wrote %d bytes", seen.Written)
	}
	landed(t, fleet, target, path, content)
}

// claudeVersion is the version `claude --version` prints, which Claude
// Code also declares to MCP servers.
func claudeVersion(t *testing.T, cc func(...string) *exec.Cmd) string {
	t.Helper()
	out, err := cc("--version").Output()
	if err != nil {
		t.Fatalf("claude --version: %v", err)
	}
	v, _, _ := strings.Cut(strings.TrimSpace(string(out)), " ")
	return v
}

// claudeWalkThrough is the walk-through with Claude Code: the gateway
// added with `claude mcp add --transport http` and the bearer token as
// README shows, `claude mcp list` connecting, and `claude -p` against a
// local fake model whose replies call list_machines, read_file on a
// machine, fanout and last a write_file on target that waits for its
// user's approval there (sent again if the machine's wait ran out).
func claudeWalkThrough(t *testing.T, bin, url, token string, fleet []fleetMachine, target fleetMachine) {
	argv, err := agentcli.Find(claude.Program, agenttest.CLIs(t))
	if err != nil {
		t.Fatal(err)
	}
	const path, content = "from-claude.txt", "written by Claude Code\n"
	write := fakemodel.Call{Name: "mcp__fleet__write_file", Args: map[string]any{"machine": target.name, "path": path, "content": content, "idempotency_key": "claude-1"}}
	steps := []fakemodel.Call{
		{Name: "mcp__fleet__list_machines", Args: map[string]any{}},
		{Name: "mcp__fleet__read_file", Args: map[string]any{"machine": fleet[1].name, "path": "f.txt"}},
		{Name: "mcp__fleet__fanout", Args: map[string]any{"op": "search_text", "args": map[string]any{"query": "hello"}, "selector": "team=a"}},
		write,
	}
	model := fakemodel.Messages(t, func(r *fakemodel.Request) fakemodel.Reply {
		res := r.Results()
		switch {
		case len(res) < len(steps):
			return fakemodel.Reply{Calls: []fakemodel.Call{steps[len(res)]}}
		case strings.Contains(res[len(res)-1].Text, "APPROVAL_PENDING") && len(res) < len(steps)+10:
			return fakemodel.Reply{Calls: []fakemodel.Call{write}}
		}
		return fakemodel.Reply{Text: "done"}
	})
	dir := t.TempDir()
	env := claudeTestEnv(dir, model.URL)
	project := filepath.Join(dir, "project")
	os.MkdirAll(project, 0o755)
	cc := func(args ...string) *exec.Cmd {
		c := exec.Command(argv[0], append(argv[1:len(argv):len(argv)], args...)...)
		c.Env, c.Dir = env, project
		return c
	}
	if out, err := cc("mcp", "add", "--transport", "http", "fleet", url, "--header", "Authorization: Bearer "+token).CombinedOutput(); err != nil {
		t.Fatalf("claude mcp add: %v\n%s", err, out)
	}
	if out, err := cc("mcp", "list").CombinedOutput(); err != nil || !strings.Contains(string(out), "fleet") || !strings.Contains(string(out), "Connected") {
		t.Fatalf("claude mcp list does not connect to the gateway: %v\n%s", err, out)
	}
	done, out := startClient(t, cc("-p", "work on the fleet", "--output-format", "json", "--allowedTools",
		"mcp__fleet__list_machines,mcp__fleet__read_file,mcp__fleet__fanout,mcp__fleet__write_file"))
	approveWhenHeld(t, bin, target, path, "claude-code "+claudeVersion(t, cc), done, out)
	waitExit(t, "claude -p", done, out)
	landed(t, fleet, target, path, content)

	// What Claude Code got back, as its model saw it.
	reqs := model.Requests()
	res := reqs[len(reqs)-1].Results()
	if len(res) < len(steps) {
		t.Fatalf("the model saw %d tool results:\n%s", len(res), out.String())
	}
	for _, m := range fleet {
		if !strings.Contains(res[0].Text, `"name":"`+m.name+`"`) {
			t.Errorf("list_machines as Claude Code saw it lacks %s: %s", m.name, res[0].Text)
		}
	}
	if !strings.Contains(res[1].Text, "hello from "+fleet[1].name) {
		t.Errorf("read_file on %s as Claude Code saw it: %s", fleet[1].name, res[1].Text)
	}
	if !strings.Contains(res[2].Text, `"ok":2`) || !strings.Contains(res[2].Text, `"failed":0`) {
		t.Errorf("fanout as Claude Code saw it: %s", res[2].Text)
	}
	if last := res[len(res)-1].Text; !strings.Contains(last, `"bytes_written":`) {
		t.Errorf("the write as Claude Code saw it: %s", last)
	}
}
