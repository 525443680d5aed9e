package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hostlink/hostlink/internal/apitype"
	"github.com/hostlink/hostlink/internal/approvals"
	"github.com/hostlink/hostlink/internal/tstest"
)

// defaultEnv is an environment with its own HOSTLINK_HOME on the default
// configuration: only the HTTP port is an ephemeral one, so that the
// daemon `hostlink mcp` starts does not take 7717.
func defaultEnv(t *testing.T) (home string, env []string) {
	home = t.TempDir()
	os.MkdirAll(filepath.Join(home, "config"), 0o700)
	if err := os.WriteFile(filepath.Join(home, "config", "config.toml"), []byte(ephemeralListen), 0o600); err != nil {
		t.Fatal(err)
	}
	return home, append(os.Environ(), "HOSTLINK_HOME="+home)
}

// ephemeralListen is the [server] of test configs whose daemon `hostlink
// mcp` may start.
const ephemeralListen = "[server]\nlisten = \"127.0.0.1:0\"\n"

// stopDaemonAtEnd stops, when the test ends, whatever daemon serves env's
// control channel (stopDaemon), so that the test's directories can be
// removed.
func stopDaemonAtEnd(t *testing.T, env []string, bin string) {
	t.Cleanup(func() { stopDaemon(t, env, bin) })
}

// stopDaemon stops the daemon serving env's control channel, if one does,
// and waits for its process to end.
func stopDaemon(t *testing.T, env []string, bin string) {
	t.Helper()
	out, err := run(t, env, bin, "status", "--json")
	if err != nil {
		return // none runs
	}
	var st apitype.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Errorf("status --json: %v\n%s", err, out)
		return
	}
	if out, err := run(t, env, bin, "stop"); err != nil || !strings.Contains(out, "stopped") {
		t.Errorf("hostlink stop: %v\n%s", err, out)
	}
	tstest.WaitFor(t, 30*time.Second, "the daemon's process to end", func() bool { return processGone(st.PID) })
}

// daemonStatus is `hostlink status --json` of the daemon serving env.
func daemonStatus(t *testing.T, env []string, bin string) apitype.Status {
	t.Helper()
	out, err := run(t, env, bin, "status", "--json")
	if err != nil {
		t.Fatalf("status: %v\n%s", err, out)
	}
	var st apitype.Status
	if err := json.Unmarshal([]byte(out), &st); err != nil {
		t.Fatalf("status --json: %v\n%s", err, out)
	}
	return st
}

// waitClient is testdata/mcp_wait.mjs running: one stdio client of
// `hostlink mcp` making a write_file the default policy holds.
type waitClient struct {
	cmd    *exec.Cmd
	events chan map[string]any
	stderr *syncBuffer
}

func startWaitClient(t *testing.T, env []string, bin, path, content string) *waitClient {
	t.Helper()
	modules := tstest.Env(t, "HOSTLINK_NODE_MODULES", ".ci/run installs the MCP TypeScript SDK and sets it")
	dir := t.TempDir()
	script, err := os.ReadFile(filepath.Join("testdata", "mcp_wait.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "mcp_wait.mjs"), script, 0o644)
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	c := &waitClient{events: make(chan map[string]any, 100), stderr: &syncBuffer{}}
	c.cmd = exec.Command("node", filepath.Join(dir, "mcp_wait.mjs"), bin, path, content)
	c.cmd.Env = env
	c.cmd.Stderr = c.stderr
	stdout, _ := c.cmd.StdoutPipe()
	if err := c.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.cmd.Process.Kill(); c.cmd.Wait() })
	go func() {
		defer close(c.events)
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			var ev map[string]any
			if json.Unmarshal(sc.Bytes(), &ev) == nil {
				c.events <- ev
			}
		}
	}()
	return c
}

// next returns the client's next event other than a resend's "pending";
// it fails the test when the client ends first.
func (c *waitClient) next(t *testing.T) map[string]any {
	t.Helper()
	guard := time.After(2 * time.Minute)
	for {
		select {
		case ev, ok := <-c.events:
			if !ok {
				t.Fatalf("the stdio client ended: %v\nstderr: %s", c.cmd.ProcessState, c.stderr.String())
			}
			if ev["event"] != "pending" {
				return ev
			}
		case <-guard:
			t.Fatalf("no event from the stdio client in 2 minutes; stderr: %s", c.stderr.String())
		}
	}
}

var approvalID = regexp.MustCompile(`apr_[0-9a-f]+`)

// heldFor waits until the client's call is held for approval and returns
// the approval's id, read from the progress notification that says where
// to answer.
func (c *waitClient) heldFor(t *testing.T) string {
	t.Helper()
	for {
		ev := c.next(t)
		if ev["event"] != "progress" {
			if ev["event"] == "connected" {
				continue
			}
			t.Fatalf("want a progress notification naming the approval, got %v", ev)
		}
		msg, _ := ev["message"].(string)
		if !strings.Contains(msg, "hostlink approvals approve") || !strings.Contains(msg, "web console") {
			t.Fatalf("the progress notification does not say where to answer: %q", msg)
		}
		return approvalID.FindString(msg)
	}
}

// TestStdioClientsShareTheDaemon: on the default policy, two stdio clients
// (the official TypeScript SDK, through `hostlink mcp`, which starts the
// daemon) and one HTTP client have write_file calls held by one broker;
// `hostlink approvals list` shows all three, `approvals approve` lets the
// held call finish, a killed stdio client's approval is abandoned and
// cannot be approved, and the audit log is one verified chain.
func TestStdioClientsShareTheDaemon(t *testing.T) {
	t.Parallel()
	bin := build(t)
	home, env := defaultEnv(t)
	stopDaemonAtEnd(t, env, bin)

	a := startWaitClient(t, env, bin, "a.txt", "from a")
	idA := a.heldFor(t)
	if !strings.Contains(a.stderr.String(), "started a hostlink daemon in the background") || !strings.Contains(a.stderr.String(), "/console/") {
		t.Errorf("the first hostlink mcp does not say it started a daemon, with the console: %s", a.stderr.String())
	}
	t.Logf("client a held for %s", idA)
	b := startWaitClient(t, env, bin, "b.txt", "from b")
	idB := b.heldFor(t)
	if strings.Contains(b.stderr.String(), "started a hostlink daemon") {
		t.Errorf("the second hostlink mcp started another daemon: %s", b.stderr.String())
	}

	t.Logf("client b held for %s", idB)
	// The HTTP client, on the daemon the first stdio client started.
	st := daemonStatus(t, env, bin)
	var url string
	for _, tr := range st.Transports {
		if tr.Name == "mcp-http" {
			url = tr.Address
		}
	}
	tok, err := os.ReadFile(filepath.Join(home, "state", "http.token"))
	if err != nil {
		t.Fatal(err)
	}
	hc, err := mcp.NewClient(&mcp.Implementation{Name: "http-e2e", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerRT(strings.TrimSpace(string(tok)))}}, nil)
	if err != nil {
		t.Fatalf("HTTP client: %v", err)
	}
	defer hc.Close()
	httpDone := make(chan *mcp.CallToolResult, 1)
	go func() {
		for {
			res, err := hc.CallTool(context.Background(), &mcp.CallToolParams{Name: "write_file", Arguments: map[string]any{"path": "c.txt", "content": "from http"}})
			if err != nil {
				t.Errorf("HTTP write_file: %v", err)
				httpDone <- nil
				return
			}
			// Resent as APPROVAL_PENDING says, until decided.
			if !res.IsError || !strings.Contains(res.Content[0].(*mcp.TextContent).Text, "APPROVAL_PENDING") {
				httpDone <- res
				return
			}
		}
	}()

	var idC string
	tstest.WaitFor(t, time.Minute, "three pending approvals in `hostlink approvals list`", func() bool {
		list := approvalsList(t, env, bin)
		idC = ""
		seen := map[string]string{}
		for _, ap := range list {
			seen[ap.ID] = string(ap.Action.Transport)
			if ap.Action.Transport == "mcp-http" {
				idC = ap.ID
			}
		}
		return len(list) == 3 && seen[idA] == "mcp-stdio" && seen[idB] == "mcp-stdio" && idC != ""
	})
	// Each approval names its client as it introduced itself, beside the
	// measured peer.
	for _, ap := range approvalsList(t, env, bin) {
		want := map[string]string{"mcp-stdio": "hostlink-wait-e2e 2.0.0 (client pid ", "mcp-http": "http-e2e 1 (127.0.0.1:"}[string(ap.Action.Transport)]
		if !strings.HasPrefix(ap.Action.Peer, want) {
			t.Errorf("approval %s names its caller %q, want %q…", ap.ID, ap.Action.Peer, want)
		}
	}

	t.Logf("all three pending; http %s", idC)
	// Approved through the CLI on the daemon: the held call finishes.
	if out, err := run(t, env, bin, "approvals", "approve", idA); err != nil {
		t.Fatalf("approvals approve: %v\n%s", err, out)
	}
	if ev := a.next(t); ev["event"] != "result" {
		t.Fatalf("after approval, client a got %v", ev)
	}
	if b, err := os.ReadFile(filepath.Join(home, "workspace", "a.txt")); err != nil || string(b) != "from a" {
		t.Fatalf("a.txt = %q, %v", b, err)
	}

	t.Logf("a finished")
	// A stdio client killed mid-wait: its approval is abandoned, for good.
	b.cmd.Process.Kill()
	tstest.WaitFor(t, time.Minute, "the killed client's approval to be abandoned", func() bool {
		out, err := run(t, env, bin, "approvals", "show", idB, "--json")
		var ap approvals.Approval
		return err == nil && json.Unmarshal([]byte(out), &ap) == nil && ap.State == approvals.Abandoned
	})
	out, err := run(t, env, bin, "approvals", "approve", idB)
	if err == nil || !strings.Contains(out, string(approvals.CodeDecided)) || !strings.Contains(out, "abandoned") {
		t.Fatalf("approving an abandoned approval: %v\n%s", err, out)
	}
	if _, err := os.Stat(filepath.Join(home, "workspace", "b.txt")); err == nil {
		t.Fatal("the killed client's write ran")
	}

	t.Logf("b abandoned")
	if out, err := run(t, env, bin, "approvals", "approve", idC); err != nil {
		t.Fatalf("approvals approve (HTTP): %v\n%s", err, out)
	}
	if res := <-httpDone; res == nil || res.IsError {
		t.Fatalf("the HTTP call after approval: %+v", res)
	}

	t.Logf("http finished")
	// One audit chain holds both transports' calls and the approvals.
	log, err := os.ReadFile(filepath.Join(home, "audit", "audit.log"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"peer":"hostlink-wait-e2e 2.0.0 (client pid `, `"peer":"http-e2e 1 (127.0.0.1:`, `"transport":"mcp-stdio"`, `"transport":"mcp-http"`, `"approval_abandoned"`, `"approval_decided"`} {
		if !bytes.Contains(log, []byte(want)) {
			t.Errorf("the audit log has no %s", want)
		}
	}
	if out, err := run(t, env, bin, "audit", "verify"); err != nil {
		t.Fatalf("audit verify: %v\n%s", err, out)
	}
}

func approvalsList(t *testing.T, env []string, bin string) []approvals.Approval {
	t.Helper()
	out, err := run(t, env, bin, "approvals", "list", "--json")
	if err != nil {
		t.Fatalf("approvals list: %v\n%s", err, out)
	}
	var list []approvals.Approval
	if err := json.Unmarshal([]byte(out), &list); err != nil {
		t.Fatalf("approvals list --json: %v\n%s", err, out)
	}
	return list
}

// syncBuffer is a bytes.Buffer safe for a process's writes and the test's
// reads.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// TestServeIdleExit: a daemon with --idle-exit stops by itself once no
// client has used it for that long, and records why; one without never
// does (every other test's serve).
func TestServeIdleExit(t *testing.T) {
	t.Parallel()
	bin := build(t)
	home, env := defaultEnv(t)
	cmd := exec.Command(bin, "serve", "--idle-exit", "1s")
	cmd.Env = env
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatalf("serve --idle-exit exited with %v", err)
		}
	case <-time.After(2 * time.Minute):
		cmd.Process.Kill()
		t.Fatal("serve --idle-exit 1s still runs after 2 minutes")
	}
	log, _ := os.ReadFile(filepath.Join(home, "audit", "audit.log"))
	if !bytes.Contains(log, []byte(`"reason":"idle for 1s"`)) {
		t.Fatalf("the stop's reason is not in the audit log:\n%s", log)
	}
}

// TestMCPNoStart: with --no-start and no daemon, hostlink mcp fails with
// DAEMON_NOT_RUNNING naming what to do, and starts nothing.
func TestMCPNoStart(t *testing.T) {
	t.Parallel()
	bin := build(t)
	_, env := defaultEnv(t)
	out, err := run(t, env, bin, "mcp", "--no-start")
	if err == nil || !strings.Contains(out, "DAEMON_NOT_RUNNING") || !strings.Contains(out, "hostlink serve") || !strings.Contains(out, "--no-start") {
		t.Fatalf("mcp --no-start without a daemon: %v\n%s", err, out)
	}
	if out, err := run(t, env, bin, "status"); err == nil {
		t.Fatalf("a daemon runs after mcp --no-start:\n%s", out)
	}
}

// TestDisabledCapabilityNamesTheFix: on the default configuration
// run_command answers CAPABILITY_DISABLED naming --enable-shell and the
// config key, on the control channel (`hostlink call`), MCP over HTTP and
// MCP over stdio (the Go SDK client through `hostlink mcp`).
func TestDisabledCapabilityNamesTheFix(t *testing.T) {
	t.Parallel()
	bin := build(t)
	home, env := defaultEnv(t)
	_, url := startServe(t, bin, env)
	check := func(via, text string) {
		t.Helper()
		for _, want := range []string{"CAPABILITY_DISABLED", "--enable-shell", "[commands] enabled = true"} {
			if !strings.Contains(text, want) {
				t.Errorf("%s: %q does not say %s", via, text, want)
			}
		}
	}
	out, err := run(t, env, bin, "call", "run_command", `{"command":"echo hi"}`)
	if err == nil {
		t.Fatalf("call run_command ran: %s", out)
	}
	check("hostlink call", out)

	tok, err := os.ReadFile(filepath.Join(home, "state", "http.token"))
	if err != nil {
		t.Fatal(err)
	}
	hc, err := mcp.NewClient(&mcp.Implementation{Name: "http-e2e", Version: "1"}, nil).Connect(context.Background(),
		&mcp.StreamableClientTransport{Endpoint: url, HTTPClient: &http.Client{Transport: bearerRT(strings.TrimSpace(string(tok)))}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer hc.Close()
	cmd := exec.Command(bin, "mcp")
	cmd.Env = env
	sc, err := mcp.NewClient(&mcp.Implementation{Name: "stdio-e2e", Version: "1"}, nil).Connect(context.Background(), &mcp.CommandTransport{Command: cmd}, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer sc.Close()
	for via, s := range map[string]*mcp.ClientSession{"MCP over HTTP": hc, "MCP over stdio": sc} {
		res, err := s.CallTool(context.Background(), &mcp.CallToolParams{Name: "run_command", Arguments: map[string]any{"command": "echo hi"}})
		if err != nil || !res.IsError {
			t.Fatalf("%s: %+v, %v", via, res, err)
		}
		check(via, res.Content[0].(*mcp.TextContent).Text)
	}
}

// TestTakenPortNamesTheFix: a taken HTTP address answers
// LISTEN_ADDRESS_IN_USE naming --listen and the config key.
func TestTakenPortNamesTheFix(t *testing.T) {
	t.Parallel()
	bin := build(t)
	_, env := defaultEnv(t)
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	out, err := run(t, env, bin, "serve", "--listen", ln.Addr().String())
	for _, want := range []string{"LISTEN_ADDRESS_IN_USE", ln.Addr().String(), "--listen", "[server] listen"} {
		if err == nil || !strings.Contains(out, want) {
			t.Errorf("serve on a taken port: %v, %q does not say %s", err, out, want)
		}
	}
}

// TestRootRedirectsToConsole: the HTTP address itself leads to the console.
func TestRootRedirectsToConsole(t *testing.T) {
	t.Parallel()
	bin := build(t)
	_, env := defaultEnv(t)
	_, url := startServe(t, bin, env)
	root := strings.TrimSuffix(url, "mcp")
	c := &http.Client{CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	resp, err := c.Get(root)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusFound || resp.Header.Get("Location") != "/console/" {
		t.Fatalf("GET %s: %d → %q", root, resp.StatusCode, resp.Header.Get("Location"))
	}
	resp, err = c.Get(root + "nothing-here")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound {
		t.Fatalf("GET an unknown path: %d", resp.StatusCode)
	}
}

// TestCallSaysWhatItWaitsFor: on the default policy `hostlink call
// write_file` says on stderr which approval it waits for and how to answer;
// approved, it prints the result; killed while waiting, its approval is
// abandoned.
func TestCallSaysWhatItWaitsFor(t *testing.T) {
	t.Parallel()
	bin := build(t)
	home, env := defaultEnv(t)
	startServe(t, bin, env)
	call := func(path string) (*exec.Cmd, *syncBuffer, string) {
		t.Helper()
		cmd := exec.Command(bin, "call", "write_file", `{"path":"`+path+`","content":"by call"}`)
		cmd.Env = env
		stdout := &syncBuffer{}
		cmd.Stdout = stdout
		stderr, _ := cmd.StderrPipe()
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			line := sc.Text()
			if strings.Contains(line, "waiting for the user to approve") {
				if !strings.Contains(line, "hostlink approvals approve apr_") || !strings.Contains(line, "web console") {
					t.Fatalf("the waiting message does not say where to answer: %q", line)
				}
				go io.Copy(io.Discard, stderr)
				return cmd, stdout, approvalID.FindString(line)
			}
		}
		t.Fatalf("hostlink call ended without saying what it waits for")
		return nil, nil, ""
	}

	cmd, stdout, id := call("called.txt")
	if out, err := run(t, env, bin, "approvals", "approve", id); err != nil {
		t.Fatalf("approve: %v\n%s", err, out)
	}
	if err := cmd.Wait(); err != nil || !strings.Contains(stdout.String(), `"revision"`) {
		t.Fatalf("the approved call: %v\n%s", err, stdout.String())
	}
	if b, err := os.ReadFile(filepath.Join(home, "workspace", "called.txt")); err != nil || string(b) != "by call" {
		t.Fatalf("called.txt = %q, %v", b, err)
	}

	cmd, _, id = call("killed.txt")
	cmd.Process.Kill()
	tstest.WaitFor(t, time.Minute, "the killed call's approval to be abandoned", func() bool {
		out, err := run(t, env, bin, "approvals", "show", id, "--json")
		var ap approvals.Approval
		return err == nil && json.Unmarshal([]byte(out), &ap) == nil && ap.State == approvals.Abandoned
	})
}
