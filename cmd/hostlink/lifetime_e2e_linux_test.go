package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hostlink/hostlink/internal/agent/agenttest"
	"github.com/hostlink/hostlink/internal/agent/fakemodel"
	"github.com/hostlink/hostlink/internal/desktop/xvfbtest"
	"github.com/hostlink/hostlink/internal/tstest"
)

// TestNothingOutlivesKill9 kills the real `hostlink serve` with SIGKILL
// while it runs one child of every kind: a command whose shell left a
// grandchild, a task mid-turn on each agent runtime (the real Codex,
// Claude Code and Qoder CLIs, the first two against fake model servers,
// Qoder on its fake responses), and an application it launched on an
// Xvfb desktop. Once hostlink is dead (reaped), every process it had
// started, directly or not, must be gone within a second: none is
// reparented to init and left running. (The companion helper, which
// hostlink starts only under WSL, has its own test in internal/companion.)
func TestNothingOutlivesKill9(t *testing.T) {
	t.Parallel()
	clis := agenttest.CLIs(t)
	x := xvfbtest.Start(t, 800, 600)
	xvfbtest.Need(t, "xterm")
	node := tstest.Tool(t, "node")
	bin := build(t)
	home, env := hostlinkEnv(t)
	work := filepath.Join(home, "a")
	os.MkdirAll(work, 0o755)

	slow := func(*fakemodel.Request) fakemodel.Reply {
		return fakemodel.Reply{Text: strings.Repeat("slow ", 600), Chunks: 600, Delay: time.Second}
	}
	responses, messages := fakemodel.Responses(t, slow), fakemodel.Messages(t, slow)
	codexHome := t.TempDir()
	os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(`model = "gpt-5.5"
model_provider = "mock"
[features]
remote_models = false
[model_providers.mock]
name = "mock"
base_url = "`+responses.URL+`/v1"
wire_api = "responses"
request_max_retries = 0
stream_max_retries = 0
`), 0o600)
	// qodercli on its fake responses: a wrapper that adds the test flags
	// to every session and execs node, so the process is the CLI's own.
	fake := filepath.Join(t.TempDir(), "fake.jsonl")
	os.WriteFile(fake, []byte(`{"method":"generateContentStream","response":[`+strings.Repeat(
		`{"candidates":[{"content":{"role":"model","parts":[{"text":"slow "}]}}]},`, 300)+
		`{"candidates":[{"content":{"role":"model","parts":[{"text":"end"}]},"finishReason":"STOP"}]}]}`+"\n"), 0o600)
	qoder := filepath.Join(t.TempDir(), "qodercli")
	os.WriteFile(qoder, []byte("#!/bin/sh\nexec "+node+" "+filepath.Join(clis, "@qoder-ai/qodercli/bundle/qodercli.js")+
		` "$@" --fake-responses `+fake+` --settings '{"security":{"auth":{"useExternal":true}}}'`+"\n"), 0o755)

	dataHome := t.TempDir()
	os.MkdirAll(filepath.Join(dataHome, "applications"), 0o755)
	os.WriteFile(filepath.Join(dataHome, "applications", "hostlink-test-term.desktop"), []byte(
		"[Desktop Entry]\nType=Application\nName=Test Terminal\nExec=xterm -T launched-by-hostlink\n"), 0o644)

	cfg := fmt.Sprintf(`[commands]
enabled = true
[computer]
enabled = true
[agents]
enabled = true
runtimes = ["codex", "claude", "qoder"]
codex_path = '%s'
claude_path = '%s'
qoder_path = '%s'
[[workdirs]]
alias = "a"
path = '%s'
agent_mode = "workspace-write"
`, clis, clis, qoder, work) + allowPolicy
	os.WriteFile(filepath.Join(home, "config", "config.toml"), []byte(cfg), 0o600)
	env = append(env, x.Env()...)
	env = append(env, "HOME="+t.TempDir(), "WAYLAND_DISPLAY=", "DBUS_SESSION_BUS_ADDRESS=",
		"XDG_DATA_HOME="+dataHome, "XDG_DATA_DIRS="+filepath.Join(dataHome, "none"),
		"CODEX_HOME="+codexHome,
		"ANTHROPIC_BASE_URL="+messages.URL, "ANTHROPIC_API_KEY=test-key", "CLAUDE_CONFIG_DIR="+t.TempDir(),
		"CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1", "DISABLE_AUTOUPDATER=1",
		"QODER_FAKE_STREAM_DELAY_MS=1000")
	serve, _ := startServe(t, bin, env)

	if _, code := callJSON(t, env, bin, "start_command", `{"workdir":"a","command":"sleep 600 & sleep 600; wait","timeout_seconds":3000}`); code != "" {
		t.Fatalf("start_command: %s", code)
	}
	if _, code := callJSON(t, env, bin, "computer_launch_app", `{"app_id":"hostlink-test-term"}`); code != "" {
		t.Fatalf("computer_launch_app: %s", code)
	}
	var tasks []string
	for _, rt := range []string{"codex", "claude", "qoder"} {
		task, code := callJSON(t, env, bin, "submit_agent_task",
			`{"runtime":"`+rt+`","workdir":"a","prompt":"go slowly","queue_if_not_ready":true}`)
		if code != "" {
			t.Fatalf("submit %s: %s", rt, code)
		}
		tasks = append(tasks, task["task_id"].(string))
	}
	for _, id := range tasks {
		tstest.WaitFor(t, 3*time.Minute, "task "+id+" to stream", func() bool {
			got, code := callJSON(t, env, bin, "read_agent_task_events", `{"task_id":"`+id+`","max_events":500}`)
			if code != "" {
				t.Fatalf("events: %s", code)
			}
			for _, ev := range got["events"].([]any) {
				switch ev.(map[string]any)["type"] {
				case "item.delta":
					return true
				case "task.status":
					if to := ev.(map[string]any)["data"].(map[string]any)["to"]; to != "running" && to != "starting" {
						t.Fatalf("task %s ended: %v", id, got)
					}
				}
			}
			return false
		})
	}
	x.Eventually("the launched xterm's window", func() bool {
		out, _ := x.Output("xdotool", "search", "--name", "^launched-by-hostlink$")
		return strings.TrimSpace(out) != ""
	})

	tree := descendants(serve.Process.Pid)
	// The command's grandchild, the three runtimes (Qoder is node), the
	// application; hostlink's guardian is among them too, and must be gone
	// as well once it has done its work.
	for _, want := range []string{"sleep", "codex", "claude", "node", "xterm"} {
		found := false
		for _, p := range tree {
			found = found || p.comm == want
		}
		if !found {
			t.Fatalf("no %s among hostlink's descendants: %v", want, tree)
		}
	}
	serve.Process.Kill()
	serve.Wait()
	if !tstest.Eventually(time.Second, func() bool {
		for _, p := range tree {
			if p.running() {
				return false
			}
		}
		return true
	}) {
		var left []proc
		for _, p := range tree {
			if p.running() {
				left = append(left, p)
				syscall.Kill(p.pid, syscall.SIGKILL)
			}
		}
		t.Fatalf("alive a second after hostlink died: %v (of %d)", left, len(tree))
	}
	t.Logf("%d processes, all gone", len(tree))
}

// TestLedgerEndsLeftoversAtStart: when hostlink and its guardian are both
// killed (the guardian kept from acting, then killed once hostlink is
// dead), the command's background grandchild is left running,
// and the next `hostlink serve` has ended it by the time it reports its
// address: before it reconciles or reports anything.
func TestLedgerEndsLeftoversAtStart(t *testing.T) {
	t.Parallel()
	bin := build(t)
	home, env := hostlinkEnv(t)
	work := filepath.Join(home, "a")
	os.MkdirAll(work, 0o755)
	cfg := "[commands]\nenabled = true\n[[workdirs]]\nalias = \"a\"\npath = '" + work + "'\n" + allowPolicy
	os.WriteFile(filepath.Join(home, "config", "config.toml"), []byte(cfg), 0o600)
	serve, _ := startServe(t, bin, env)
	if _, code := callJSON(t, env, bin, "start_command", `{"workdir":"a","command":"sleep 600 & sleep 600; wait","timeout_seconds":3000}`); code != "" {
		t.Fatalf("start_command: %s", code)
	}
	var guardian proc
	var sleeps []proc
	tstest.WaitFor(t, 30*time.Second, "the guardian and both sleeps", func() bool {
		guardian, sleeps = proc{}, nil
		for _, p := range descendants(serve.Process.Pid) {
			if cmdline, _ := os.ReadFile("/proc/" + strconv.Itoa(p.pid) + "/cmdline"); bytes.HasPrefix(cmdline, []byte("hostlink-guardian\x00")) {
				guardian = p
			} else if p.comm == "sleep" {
				sleeps = append(sleeps, p)
			}
		}
		return guardian.pid != 0 && len(sleeps) == 2
	})
	// The guardian acts when its pipe from hostlink reads end of file; a
	// copy of hostlink's end held here keeps it waiting while hostlink
	// dies. (Stopping it with SIGSTOP does not hold: its group is orphaned
	// when hostlink dies, and the kernel continues such a group.)
	pipe := holdGuardianPipe(t, serve.Process.Pid, guardian.pid)
	serve.Process.Kill()
	serve.Wait()
	syscall.Kill(guardian.pid, syscall.SIGKILL)
	tstest.WaitFor(t, 30*time.Second, "the guardian to die", func() bool { return !guardian.running() })
	pipe.Close()
	// The shell died of its parent-death signal; the background sleep, in
	// its group, had only the guardian to end it.
	var left []proc
	for _, p := range sleeps {
		if p.running() {
			left = append(left, p)
		}
	}
	if len(left) == 0 {
		t.Fatal("nothing left running: the test cannot tell whether the next hostlink ends it")
	}
	defer func() {
		for _, p := range left {
			if p.running() {
				syscall.Kill(p.pid, syscall.SIGKILL)
			}
		}
	}()

	startServe(t, bin, env)
	for _, p := range left {
		if p.running() {
			t.Errorf("%v still runs after the next hostlink reported its address", p)
		}
	}
}

// holdGuardianPipe returns a copy, taken with pidfd_getfd, of the write
// end hostlink holds of the pipe its guardian reads.
func holdGuardianPipe(t *testing.T, hostlink, guardian int) *os.File {
	t.Helper()
	in, err := os.Readlink(fmt.Sprintf("/proc/%d/fd/0", guardian))
	if err != nil || !strings.HasPrefix(in, "pipe:") {
		t.Fatalf("the guardian's input: %q %v", in, err)
	}
	dir := fmt.Sprintf("/proc/%d/fd", hostlink)
	fds, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range fds {
		if l, _ := os.Readlink(filepath.Join(dir, e.Name())); l != in {
			continue
		}
		n, _ := strconv.Atoi(e.Name())
		pidfd, err := unix.PidfdOpen(hostlink, 0)
		if err != nil {
			t.Fatal(err)
		}
		defer unix.Close(pidfd)
		fd, err := unix.PidfdGetfd(pidfd, n, 0)
		if err != nil {
			t.Fatalf("pidfd_getfd: %v", err)
		}
		return os.NewFile(uintptr(fd), in)
	}
	t.Fatalf("hostlink holds no end of %s", in)
	return nil
}

// proc is a process as /proc/PID/stat names it.
type proc struct {
	pid, ppid int
	start     string
	comm      string
	state     byte
}

func (p proc) String() string { return fmt.Sprintf("%d(%s)", p.pid, p.comm) }

func readStat(pid int) (proc, bool) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return proc{}, false
	}
	open, close := bytes.IndexByte(b, '('), bytes.LastIndexByte(b, ')')
	f := strings.Fields(string(b[close+1:]))
	if open < 0 || len(f) < 20 {
		return proc{}, false
	}
	ppid, _ := strconv.Atoi(f[1])
	return proc{pid: pid, ppid: ppid, start: f[19], comm: string(b[open+1 : close]), state: f[0][0]}, true
}

// running reports whether p, the same process (start time), still runs.
func (p proc) running() bool {
	now, ok := readStat(p.pid)
	return ok && now.start == p.start && now.state != 'Z' && now.state != 'X'
}

// descendants lists every process below pid.
func descendants(pid int) []proc {
	d, _ := os.ReadDir("/proc")
	children := map[int][]proc{}
	for _, e := range d {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if p, ok := readStat(n); ok {
			children[p.ppid] = append(children[p.ppid], p)
		}
	}
	var out []proc
	queue := []int{pid}
	for len(queue) > 0 {
		for _, c := range children[queue[0]] {
			out = append(out, c)
			queue = append(queue, c.pid)
		}
		queue = queue[1:]
	}
	return out
}
