package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/tstest"
)

// fakeRuntimeEnv names the fake agent runtime's program for a hostlink
// built by build (testruntimes_hostlinktest.go reads it).
const fakeRuntimeEnv = "HOSTLINK_TEST_FAKE_RUNTIME"

// built is the hostlink program the tests run, compiled once for the
// whole test binary: a link of the full program takes seconds, which,
// once per test, made up half of this package's time on a busy machine
// (and pushed it past go test's default ten-minute timeout).
var built struct {
	sync.Once
	dir, bin string
	err      error
	out      []byte
}

// fake is the fake agent runtime's program, built once for the test
// binary as hostlink is.
var fake struct {
	sync.Once
	dir, bin string
	err      error
	out      []byte
}

// e2eParallel is how many tests run at once unless -test.parallel says:
// the end-to-end tests mostly wait for the programs they start, so more of
// them than the machine has cores keep it busy (GOMAXPROCS, the default,
// is 2 on a small CI machine, and left the package near go test's
// ten-minute limit).
const e2eParallel = 4

func TestMain(m *testing.M) {
	flag.Parse()
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == "test.parallel" })
	if !set && runtime.GOMAXPROCS(0) < e2eParallel {
		flag.Set("test.parallel", strconv.Itoa(e2eParallel))
	}
	code := m.Run()
	for _, dir := range []string{built.dir, fake.dir} {
		if dir != "" {
			os.RemoveAll(dir)
		}
	}
	os.Exit(code)
}

// fakeAgent returns the fake agent runtime's program
// (internal/agent/fakeruntime/fakeagent), which fakeRuntimeEnv names to a
// hostlink from build. Tests must not change the file.
func fakeAgent(t *testing.T) string {
	t.Helper()
	fake.Do(func() {
		if fake.dir, fake.err = os.MkdirTemp("", "hostlink-e2e-fakeagent"); fake.err != nil {
			return
		}
		fake.bin = filepath.Join(fake.dir, "fakeagent")
		if runtime.GOOS == "windows" {
			fake.bin += ".exe"
		}
		fake.out, fake.err = exec.Command("go", "build", "-o", fake.bin, "../../internal/agent/fakeruntime/fakeagent").CombinedOutput()
	})
	if fake.err != nil {
		t.Fatalf("building the fake runtime: %v\n%s", fake.err, fake.out)
	}
	return fake.bin
}

// build returns the hostlink program, compiled with tag hostlinktest: it
// can run the fake agent runtime when fakeRuntimeEnv names it, and is
// otherwise the release program. Tests must not change the file.
func build(t testing.TB) string {
	t.Helper()
	built.Do(func() {
		if built.dir, built.err = os.MkdirTemp("", "hostlink-e2e"); built.err != nil {
			return
		}
		built.bin = filepath.Join(built.dir, "hostlink")
		if runtime.GOOS == "windows" {
			built.bin += ".exe"
		}
		cmd := exec.Command("go", "build", "-tags", "hostlinktest", "-o", built.bin, ".")
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		built.out, built.err = cmd.CombinedOutput()
	})
	if built.err != nil {
		t.Fatalf("go build: %v\n%s", built.err, built.out)
	}
	return built.bin
}

// hostlinkEnv is an environment with its own HOSTLINK_HOME, whose config
// allows every action (allowPolicy): these tests measure the operations,
// not the approval policy (policy_e2e_test.go does). A daemon `hostlink
// mcp` starts there listens on an ephemeral port (nodeClient stops it when
// the test ends).
func hostlinkEnv(t *testing.T) (home string, env []string) {
	home = t.TempDir()
	os.MkdirAll(filepath.Join(home, "config"), 0o700)
	if err := os.WriteFile(filepath.Join(home, "config", "config.toml"), []byte(ephemeralListen+allowPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	return home, append(os.Environ(), "HOSTLINK_HOME="+home)
}

// allowPolicy is a [policy] that allows every class of action, appended to
// the configs of tests that are not about the policy.
const allowPolicy = "\n[policy]\nfiles_write = \"allow\"\ncommands = \"allow\"\ncomputer = \"allow\"\nagents = \"allow\"\nplatform_folders = \"allow\"\n"

func run(t testing.TB, env []string, bin string, args ...string) (string, error) {
	t.Helper()
	cmd := exec.Command(bin, args...)
	cmd.Env = env
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// nodeClient runs testdata/mcp_client.mjs with the MCP TypeScript SDK from
// HOSTLINK_NODE_MODULES (installed by .ci/run). A stdio client's `hostlink
// mcp` may start a daemon: it is stopped when the test ends.
func nodeClient(t *testing.T, env []string, args ...string) map[string]any {
	t.Helper()
	modules := tstest.Env(t, "HOSTLINK_NODE_MODULES", ".ci/run installs the MCP TypeScript SDK and sets it")
	if args[0] == "stdio" {
		stopDaemonAtEnd(t, env, args[1])
	}
	dir := t.TempDir()
	script, err := os.ReadFile(filepath.Join("testdata", "mcp_client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "mcp_client.mjs"), script, 0o644)
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", append([]string{filepath.Join(dir, "mcp_client.mjs")}, args...)...)
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var seen map[string]any
	if jerr := json.Unmarshal(lastLineOf(out), &seen); jerr != nil || err != nil {
		t.Fatalf("node client: %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
	}
	return seen
}

func lastLineOf(b []byte) []byte {
	lines := bytes.Split(bytes.TrimSpace(b), []byte("\n"))
	return lines[len(lines)-1]
}

func TestMCPStdioWithTypeScriptClient(t *testing.T) {
	t.Parallel()
	bin := build(t)
	home, env := hostlinkEnv(t)
	seen := nodeClient(t, env, "stdio", bin)
	if seen["ok"] != true || seen["escape_code"] != "PATH_OUTSIDE_ALLOWED_ROOT" {
		t.Fatalf("client saw %v", seen)
	}
	t.Logf("stdio: %d tools, %v progress notifications", len(seen["tools"].([]any)), seen["progress_notifications"])
	if _, err := os.Stat(filepath.Join(home, "workspace", seen["dir"].(string), "notes", "b.txt")); err != nil {
		t.Fatalf("the client's write is not in the workspace: %v", err)
	}
	out, err := run(t, env, bin, "audit", "verify")
	if err != nil {
		t.Fatalf("audit verify after the session: %v\n%s", err, out)
	}
}

// startServe runs `hostlink serve` on an ephemeral loopback port and
// returns its MCP URL.
func startServe(t testing.TB, bin string, env []string, args ...string) (*exec.Cmd, string) {
	t.Helper()
	cmd := exec.Command(bin, append([]string{"serve", "--listen", "127.0.0.1:0"}, args...)...)
	cmd.Env = env
	return cmd, startServeCmd(t, cmd)
}

// startServeCmd starts cmd, a `hostlink serve --listen 127.0.0.1:0`, and
// returns its MCP URL.
func startServeCmd(t testing.TB, cmd *exec.Cmd) string {
	t.Helper()
	stderr, _ := cmd.StderrPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	urls := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`http://127\.0\.0\.1:\d+/mcp`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if u := re.FindString(sc.Text()); u != "" {
				urls <- u
			}
		}
	}()
	select {
	case u := <-urls:
		return u
	case <-time.After(30 * time.Second):
		t.Fatal("hostlink serve did not report its address")
	}
	return ""
}

func TestMCPHTTPWithTypeScriptClient(t *testing.T) {
	t.Parallel()
	bin := build(t)
	_, env := hostlinkEnv(t)
	cmd, url := startServe(t, bin, env)
	token := tokenOf(t, env, bin)

	// Refusals before any MCP processing.
	for _, tt := range []struct {
		name   string
		header map[string]string
		status int
	}{
		{"no token", nil, http.StatusUnauthorized},
		{"wrong token", map[string]string{"Authorization": "Bearer " + strings.Repeat("x", len(token))}, http.StatusUnauthorized},
		{"foreign origin", map[string]string{"Authorization": "Bearer " + token, "Origin": "https://evil.example"}, http.StatusForbidden},
		{"foreign host", map[string]string{"Authorization": "Bearer " + token, "Host": "evil.example"}, http.StatusForbidden},
	} {
		req, _ := http.NewRequest("POST", url, strings.NewReader(`{"jsonrpc":"2.0","id":1,"method":"ping"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Accept", "application/json, text/event-stream")
		for k, v := range tt.header {
			if k == "Host" {
				req.Host = v
			} else {
				req.Header.Set(k, v)
			}
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != tt.status {
			t.Errorf("%s: status %d, want %d", tt.name, resp.StatusCode, tt.status)
		}
	}

	seen := nodeClient(t, env, "http", url, token)
	if seen["ok"] != true {
		t.Fatalf("client saw %v", seen)
	}
	// A stdio server started by a local MCP client runs beside the daemon
	// and writes the same audit chain.
	if seen := nodeClient(t, env, "stdio", bin); seen["ok"] != true {
		t.Fatalf("stdio beside the daemon: %v", seen)
	}

	// A clean stop on SIGINT (console control events on Windows are mapped
	// to the same signals by the Go runtime).
	if runtime.GOOS != "windows" {
		cmd.Process.Signal(syscall.SIGINT)
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Fatalf("serve exited with %v after SIGINT", err)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("serve did not stop within 10s of SIGINT")
		}
	}
	out, err := run(t, env, bin, "audit", "tail", "-n", "3")
	if err != nil || !strings.Contains(out, "daemon_stop") {
		t.Fatalf("audit tail: %v\n%s", err, out)
	}
	if !strings.Contains(mustRead(t, env, bin), "http_request_refused") {
		t.Error("refused HTTP requests are not in the audit log")
	}
	if out, err := run(t, env, bin, "audit", "verify"); err != nil {
		t.Fatalf("audit verify after daemon and stdio sessions: %v\n%s", err, out)
	}
}

func mustRead(t *testing.T, env []string, bin string) string {
	out, err := run(t, env, bin, "audit", "tail", "-n", "1000")
	if err != nil {
		t.Fatal(err)
	}
	return out
}
