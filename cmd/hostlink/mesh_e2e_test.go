package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/tstest"
)

// meshEnv is the environment every process of a mesh test shares: the
// credential store is the encrypted file (no keychain in tests).
func meshEnv(home string) []string {
	return append(os.Environ(), "HOSTLINK_HOME="+home, "HOSTLINK_CREDENTIAL_BACKEND=encrypted-file", "KEYCHAIN_PASSPHRASE=mesh test passphrase")
}

// startHub runs `hostlink hub serve` on ephemeral ports and returns its
// gateway MCP URL and token.
func startHub(t testing.TB, bin string, env []string, args ...string) (*exec.Cmd, string, string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"hub", "serve", "--listen", "127.0.0.1:0", "--http", "127.0.0.1:0"}, args...)...)
	cmd.Env = env
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	urls := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`gateway MCP: (http://127\.0\.0\.1:\d+/mcp)`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if m := re.FindStringSubmatch(sc.Text()); m != nil {
				urls <- m[1]
			}
		}
	}()
	var u string
	select {
	case u = <-urls:
	case <-time.After(60 * time.Second):
		t.Fatal("hostlink hub serve did not report its address")
	}
	out, err := run(t, env, bin, "hub", "token")
	if err != nil {
		t.Fatalf("hub token: %v %s", err, out)
	}
	return cmd, u, strings.TrimSpace(out)
}

// enrolMachine enrols a machine in its own HOME through the hub's code,
// as README's walk-through does, configures it (a workdir w holding
// f.txt with content, the [mesh] extra) and starts its hostlink serve.
func enrolMachine(t *testing.T, bin string, hubEnv []string, name, labels, content, extra string) (home string, env []string, cmd *exec.Cmd) {
	t.Helper()
	out, err := run(t, hubEnv, bin, "hub", "enrol", name, "--labels", labels)
	if err != nil {
		t.Fatalf("hub enrol: %v %s", err, out)
	}
	m := regexp.MustCompile(`hostlink mesh join (\S+) (\S+)`).FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("hub enrol printed %s", out)
	}
	home = t.TempDir()
	env = meshEnv(home)
	if out, err := run(t, env, bin, "mesh", "join", m[1], m[2]); err != nil {
		t.Fatalf("mesh join: %v %s", err, out)
	}
	w := filepath.Join(home, "w")
	os.MkdirAll(w, 0o755)
	os.WriteFile(filepath.Join(w, "f.txt"), []byte(content), 0o644)
	os.MkdirAll(filepath.Join(home, "config"), 0o700)
	cfg := ephemeralListen + "[[workdirs]]\nalias = \"w\"\npath = '" + w + "'\n[mesh]\nenabled = true\n" + extra
	os.WriteFile(filepath.Join(home, "config", "config.toml"), []byte(cfg), 0o600)
	cmd, _ = startServe(t, bin, env)
	return home, env, cmd
}

// gatewayClient connects an MCP client to the hub's gateway.
func gatewayClient(t *testing.T, ctx context.Context, url, token string) *mcp.ClientSession {
	t.Helper()
	s, err := mcp.NewClient(&mcp.Implementation{Name: "mesh-e2e", Version: "1"}, nil).Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: url, HTTPClient: &http.Client{Transport: bearerRT(token)}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// callTool calls a gateway tool and returns its result's JSON (the text
// block's first line for a text result) and its error code.
func callTool(t *testing.T, ctx context.Context, s *mcp.ClientSession, name string, args map[string]any) (map[string]any, string) {
	t.Helper()
	res, err := s.CallTool(ctx, &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	first, rest, _ := strings.Cut(text, "\n")
	var out map[string]any
	if err := json.Unmarshal([]byte(first), &out); err != nil {
		t.Fatalf("%s: %v in %q", name, err, text)
	}
	if res.IsError {
		e, _ := out["error"].(map[string]any)
		code, _ := e["code"].(string)
		return e, code
	}
	if rest != "" {
		out["text"] = rest
	}
	return out, ""
}

// TestManyMachines is README's "Many machines" walk-through: a hub,
// three machines enrolled in their own HOMEs and serving, an MCP client
// of the gateway listing them, reading a file on each, searching all of
// them at once, and a write that waits for approval on its machine and
// lands once approved there; the gateway cannot approve. The clients
// people use (the MCP TypeScript SDK, Claude Code) do the same on this
// fleet in subtests, and the hub's aggregate shows all of it.
func TestManyMachines(t *testing.T) {
	bin := build(t)
	hubHome := t.TempDir()
	hubEnv := meshEnv(hubHome)
	_, url, token := startHub(t, bin, hubEnv)
	var ms []fleetMachine
	for i, name := range []string{"alpha", "beta", "gamma"} {
		// README's form of labels; gamma alone is outside team=a.
		labels := "team=a;os=linux"
		if i == 2 {
			labels = "team=b"
		}
		home, env, _ := enrolMachine(t, bin, hubEnv, name, labels, "hello from "+name+"\n", "classes = [\"files_read\", \"files_write\"]\npublish_approvals = true\nexport_audit = true\n")
		ms = append(ms, fleetMachine{name, home, env})
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	s := gatewayClient(t, ctx, url, token)

	var listed map[string]any
	tstest.WaitFor(t, time.Minute, "three machines online", func() bool {
		listed, _ = callTool(t, ctx, s, "list_machines", nil)
		n := 0
		for _, m := range listed["machines"].([]any) {
			if m.(map[string]any)["online"] == true {
				n++
			}
		}
		return n == 3
	})
	if l := listed["machines"].([]any)[0].(map[string]any); l["name"] != "alpha" || fmt.Sprint(l["labels"]) != "map[os:linux team:a]" {
		t.Errorf("alpha as listed: %v", l)
	}
	// The gateway on stdio, through the running hub's bus.
	stdio := exec.Command(bin, "hub", "mcp")
	stdio.Env = hubEnv
	ss, err := mcp.NewClient(&mcp.Implementation{Name: "mesh-e2e-stdio", Version: "1"}, nil).Connect(ctx, &mcp.CommandTransport{Command: stdio}, nil)
	if err != nil {
		t.Fatal(err)
	}
	out, code := callTool(t, ctx, ss, "read_file", map[string]any{"machine": "gamma", "path": "f.txt"})
	ss.Close()
	if code != "" || out["text"] != "hello from gamma\n" {
		t.Fatalf("read_file on gamma through hub mcp: %s %v", code, out)
	}
	tools, err := s.ListTools(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	for _, tool := range tools.Tools {
		if strings.Contains(tool.Name, "approv") && tool.Name != "respond_agent_approval" {
			t.Errorf("the gateway lists %s", tool.Name)
		}
	}
	for _, m := range ms {
		out, code := callTool(t, ctx, s, "read_file", map[string]any{"machine": m.name, "path": "f.txt"})
		if code != "" || out["text"] != "hello from "+m.name+"\n" {
			t.Fatalf("read_file on %s: %s %v", m.name, code, out)
		}
	}
	out, code = callTool(t, ctx, s, "fanout", map[string]any{"op": "search_text", "args": map[string]any{"query": "hello"}, "selector": "team=a"})
	if code != "" || out["ok"] != float64(2) || out["failed"] != float64(0) {
		t.Fatalf("fanout over team=a: %s %v", code, out)
	}
	// A write asks its machine's user.
	write := map[string]any{"machine": "beta", "path": "new.txt", "content": "approved on beta\n"}
	out, code = callTool(t, ctx, s, "write_file", write)
	if code != "APPROVAL_PENDING" || !strings.Contains(out["details"].(map[string]any)["decide_on"].(string), "beta") {
		t.Fatalf("write on beta: %s %v", code, out)
	}
	details := out["details"].(map[string]any)
	if note, _ := details["notice"].(map[string]any); note == nil || !strings.Contains(note["summary"].(string), "new.txt") {
		t.Errorf("no notice of the approval from the hub's bucket: %v", details)
	}
	id := details["approval_id"].(string)
	if out, err := run(t, ms[1].env, bin, "approvals", "approve", id); err != nil {
		t.Fatalf("approve on beta: %v %s", err, out)
	}
	if _, code = callTool(t, ctx, s, "write_file", write); code != "" {
		t.Fatalf("the approved write: %s", code)
	}
	if b, err := os.ReadFile(filepath.Join(ms[1].home, "w", "new.txt")); err != nil || string(b) != "approved on beta\n" {
		t.Fatalf("beta's file: %q %v", b, err)
	}
	for _, m := range []fleetMachine{ms[0], ms[2]} {
		if _, err := os.Stat(filepath.Join(m.home, "w", "new.txt")); err == nil {
			t.Fatalf("the write landed on %s", m.name)
		}
	}
	// The same with the clients people use: the TypeScript SDK writes on
	// alpha, Claude Code on gamma, each approved there.
	t.Run("TypeScript SDK", func(t *testing.T) { tsWalkThrough(t, bin, url, token, ms, ms[0]) })
	t.Run("Claude Code", func(t *testing.T) { claudeWalkThrough(t, bin, url, token, ms, ms[2]) })

	// Each machine's own chain holds its calls and verifies.
	for _, m := range ms {
		if out, err := run(t, m.env, bin, "audit", "verify"); err != nil {
			t.Fatalf("audit verify on %s: %v %s", m.name, err, out)
		}
	}
	// The hub's aggregate has all of it, proven complete per machine.
	tstest.WaitFor(t, time.Minute, "every machine's audit exported and proven", func() bool {
		out, err := run(t, hubEnv, bin, "hub", "audit", "--verify")
		return err == nil && strings.Count(out, ": complete") == 3
	})
	out2, err := run(t, hubEnv, bin, "hub", "audit", "--machine", "beta", "--class", "files_write", "-n", "0")
	if err != nil {
		t.Fatalf("hub audit: %v %s", err, out2)
	}
	if !strings.Contains(out2, "write_file") || !strings.Contains(out2, "APPROVAL_PENDING") || strings.Contains(out2, "read_file") || strings.Contains(out2, "alpha") {
		t.Fatalf("hub audit of beta's writes:\n%s", out2)
	}
	// Every client's approved write, each in its machine's exported
	// record naming the client (the clients' subtests skip without their
	// installs).
	type clientWrite struct{ file, client string }
	writes := map[string]clientWrite{"beta": {"new.txt", "mesh-e2e 1 ("}}
	for name, w := range map[string]clientWrite{"alpha": {"from-ts.txt", "hostlink-mesh-e2e 1.0.0 ("}, "gamma": {"from-claude.txt", "claude-code "}} {
		for _, m := range ms {
			if _, err := os.Stat(filepath.Join(m.home, "w", w.file)); m.name == name && err == nil {
				writes[name] = w
			}
		}
	}
	var state string
	ok := tstest.Eventually(time.Minute, func() bool {
		state, _ = run(t, hubEnv, bin, "hub", "audit", "--op", "write_file", "--json", "-n", "0")
		var lines []struct {
			Name   string
			Record audit.Line
		}
		json.Unmarshal([]byte(state), &lines)
		found := 0
		for name, w := range writes {
			for _, l := range lines {
				if l.Name == name && l.Record.Code == "OK" && l.Record.Transport == audit.Mesh &&
					strings.Contains(strings.Join(l.Record.Paths, " "), w.file) && strings.HasPrefix(l.Record.Peer, w.client) {
					found++
					break
				}
			}
		}
		return found == len(writes)
	})
	if !ok {
		t.Fatalf("the hub's audit lacks an approved write of %v:\n%s", writes, state)
	}
}
