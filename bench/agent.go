package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/agent/agentcli"
	"github.com/hostlink/hostlink/internal/agent/codex"
	"github.com/hostlink/hostlink/internal/agent/fakemodel"
)

// The agent turn scenario: a trivial Codex turn (the model answers "ok")
// as a hostlink agent task over MCP (submit_agent_task, then
// get_agent_task until the task is terminal, as a client waits for it),
// against the same turn on a `codex app-server` driven directly
// (thread/start, turn/start, until turn/completed). Both run the real
// Codex CLI (HOSTLINK_AGENT_CLIS, the node_modules the tests use) against
// one fake model server on loopback, each with its app-server already
// running, so the difference is hostlink's layer.

// benchTB is a benchT as the testing.TB fakemodel wants.
type benchTB struct {
	testing.TB // nil: fakemodel calls only the methods below
	b          *benchT
}

func (t benchTB) Helper()                   {}
func (t benchTB) Fatal(a ...any)            { t.b.Fatal(a...) }
func (t benchTB) Fatalf(f string, a ...any) { t.b.Fatalf(f, a...) }
func (t benchTB) Cleanup(f func())          { t.b.Cleanup(f) }

// scaleAgentTurn measures sc.AgentTurns turns each way, alternating.
func scaleAgentTurn(ctx context.Context, r *scaleResult, sc scaleConfig, bin, tmp, clis string) error {
	bt := &benchT{}
	defer bt.close()
	var model *fakemodel.Server
	if err := bt.run(func() error {
		model = fakemodel.Responses(benchTB{b: bt}, func(*fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Text: "ok"} })
		return nil
	}); err != nil {
		return err
	}
	codexHome := filepath.Join(tmp, "codex-home")
	work := filepath.Join(tmp, "agent-work")
	for _, d := range []string{codexHome, work} {
		if err := os.MkdirAll(d, 0o700); err != nil {
			return err
		}
	}
	cfg := "model = \"gpt-5.5\"\nmodel_provider = \"mock\"\n[features]\nremote_models = false\n[model_providers.mock]\nname = \"mock\"\n" +
		"base_url = \"" + model.URL + "/v1\"\nwire_api = \"responses\"\nrequest_max_retries = 0\nstream_max_retries = 0\n"
	if err := os.WriteFile(filepath.Join(codexHome, "config.toml"), []byte(cfg), 0o600); err != nil {
		return err
	}
	home := filepath.Join(tmp, "home-agent")
	agents := fmt.Sprintf("[agents]\nenabled = true\nruntimes = [\"codex\"]\ncodex_path = '%s'\n[[workdirs]]\nalias = \"agent\"\npath = '%s'\nagent_mode = \"read-only\"\n", clis, work)
	root := filepath.Join(tmp, "agent-root") // the workdir --allowed-root adds
	if err := os.MkdirAll(root, 0o755); err != nil {
		return err
	}
	d, err := startDaemonWith(ctx, bin, home, root, agents, []string{"CODEX_HOME=" + codexHome})
	if err != nil {
		return err
	}
	defer d.close()
	cs, err := d.connect(ctx)
	if err != nil {
		return err
	}
	defer cs.Close()
	viaHostlink := func() error {
		res, err := callOK(ctx, cs, "submit_agent_task", map[string]any{"runtime": "codex", "workdir": "agent", "prompt": "hello", "access": "read-only"})
		if err != nil {
			return err
		}
		var sub struct {
			TaskID string `json:"task_id"`
		}
		if err := json.Unmarshal([]byte(resultText(res)), &sub); err != nil || sub.TaskID == "" {
			return fmt.Errorf("submit_agent_task: no task_id in %q", truncate(resultText(res), 200))
		}
		for deadline := time.Now().Add(2 * time.Minute); time.Now().Before(deadline); {
			res, err := callOK(ctx, cs, "get_agent_task", map[string]any{"task_id": sub.TaskID})
			if err != nil {
				return err
			}
			var task struct {
				Status   string `json:"status"`
				Terminal bool   `json:"terminal"`
				Reason   string `json:"reason"`
			}
			if err := json.Unmarshal([]byte(resultText(res)), &task); err != nil {
				return fmt.Errorf("get_agent_task: %w", err)
			}
			if task.Terminal {
				if task.Status != "completed" {
					return fmt.Errorf("task %s: %s %s", sub.TaskID, task.Status, task.Reason)
				}
				return nil
			}
			// As BenchmarkCodexTurnOverhead polls: a tight poll would take
			// CPU from Codex itself.
			time.Sleep(2 * time.Millisecond)
		}
		return errors.New("the agent task did not end within 2 minutes")
	}
	direct, err := startCodexDirect(clis, codexHome, work)
	if err != nil {
		return err
	}
	defer direct.close()
	// Warm both: the first task starts hostlink's app-server.
	if err := viaHostlink(); err != nil {
		return err
	}
	if err := direct.turn(); err != nil {
		return err
	}
	var hl, lim []float64
	for i := range sc.AgentTurns {
		runs := []func() error{viaHostlink, direct.turn}
		if i%2 == 1 { // alternate which goes first
			runs[0], runs[1] = runs[1], runs[0]
		}
		for j, run := range runs {
			t := time.Now()
			if err := run(); err != nil {
				return err
			}
			if (j == 0) == (i%2 == 0) {
				hl = append(hl, ms(time.Since(t)))
			} else {
				lim = append(lim, ms(time.Since(t)))
			}
		}
	}
	h, l := percentile(hl, 0.5), percentile(lim, 0.5)
	r.Hostlink = []metric{{"median", h, "ms"}, {"overhead (median − the limit's)", h - l, "ms"}}
	r.Limit = []metric{{"median", l, "ms"}}
	r.LimitDesc = "the same turn on a `codex app-server` driven directly"
	r.Target = "reported: hostlink's overhead per turn (no target)"
	return nil
}

// codexDirect is a `codex app-server` driven over its JSON-RPC lines.
type codexDirect struct {
	cmd  *exec.Cmd
	in   io.WriteCloser
	out  *bufio.Reader
	next int
	cwd  string
}

type codexMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

func startCodexDirect(clis, home, cwd string) (*codexDirect, error) {
	argv, err := agentcli.Find(codex.Program, clis)
	if err != nil {
		return nil, err
	}
	cmd := exec.Command(argv[0], append(argv[1:], "app-server")...)
	cmd.Env = append(baseEnv(filepath.Dir(home)), "CODEX_HOME="+home, "NO_COLOR=1")
	cmd.Stderr = stderrSink
	in, err := cmd.StdinPipe()
	if err != nil {
		return nil, err
	}
	out, err := cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := cmd.Start(); err != nil {
		return nil, err
	}
	c := &codexDirect{cmd: cmd, in: in, out: bufio.NewReaderSize(out, 1<<20), cwd: cwd}
	if _, err := c.call("initialize", map[string]any{"clientInfo": map[string]any{"name": "hostlink-bench", "version": "0.1.0"},
		"capabilities": map[string]any{"experimentalApi": true}}); err != nil {
		c.close()
		return nil, err
	}
	if err := c.send(map[string]any{"method": "initialized"}); err != nil {
		c.close()
		return nil, err
	}
	return c, nil
}

func (c *codexDirect) close() {
	c.in.Close()
	killTree(c.cmd.Process.Pid)
	_ = c.cmd.Wait()
}

func (c *codexDirect) send(m map[string]any) error {
	line, _ := json.Marshal(m)
	_, err := c.in.Write(append(line, '\n'))
	return err
}

func (c *codexDirect) read() (codexMsg, error) {
	line, err := c.out.ReadBytes('\n')
	if err != nil {
		return codexMsg{}, fmt.Errorf("codex app-server: %w", err)
	}
	var m codexMsg
	err = json.Unmarshal(line, &m)
	return m, err
}

// call sends a request and reads until its response, skipping notifications.
func (c *codexDirect) call(method string, params any) (json.RawMessage, error) {
	c.next++
	id := fmt.Sprint(c.next)
	if err := c.send(map[string]any{"id": c.next, "method": method, "params": params}); err != nil {
		return nil, err
	}
	for {
		m, err := c.read()
		if err != nil {
			return nil, err
		}
		if m.Method == "" && string(m.ID) == id {
			if m.Error != nil {
				return nil, fmt.Errorf("codex %s: %s", method, m.Error)
			}
			return m.Result, nil
		}
	}
}

// turn runs one turn in a new thread, as hostlink runs a task.
func (c *codexDirect) turn() error {
	res, err := c.call("thread/start", map[string]any{"cwd": c.cwd, "sandbox": "read-only", "approvalPolicy": "never"})
	if err != nil {
		return err
	}
	var th struct {
		Thread struct{ ID string } `json:"thread"`
	}
	if err := json.Unmarshal(res, &th); err != nil {
		return err
	}
	if _, err := c.call("turn/start", map[string]any{"threadId": th.Thread.ID, "input": []any{map[string]any{"type": "text", "text": "hello"}}}); err != nil {
		return err
	}
	for {
		m, err := c.read()
		if err != nil {
			return err
		}
		if m.Method == "turn/completed" {
			return nil
		}
	}
}
