package codex_test

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/agent"
	"github.com/hostlink/hostlink/internal/agent/agentcli"
	"github.com/hostlink/hostlink/internal/agent/agenttest"
	"github.com/hostlink/hostlink/internal/agent/codex"
	"github.com/hostlink/hostlink/internal/agent/fakemodel"
)

// BenchmarkCodexTurnOverhead measures hostlink's layer on a trivial warm
// Codex turn: each iteration runs one read-only task through hostlink's
// operations (submit, then the store polled until the task is terminal)
// and, interleaved with it, the same turn driven directly on a
// `codex app-server` of its own (thread/start, turn/start, wait for
// turn/completed), both against the same fake model server and both with
// their app-server already running. It reports the mean of each, their
// difference, and two parts of hostlink's: the submit call, and the time
// from the task's end to the poll that sees it.
//
//	go test -run '^$' -bench CodexTurnOverhead -benchtime 40x ./internal/agent/codex/
func BenchmarkCodexTurnOverhead(b *testing.B) {
	clis := agenttest.CLIs(b)
	model := fakemodel.Responses(b, func(*fakemodel.Request) fakemodel.Reply { return fakemodel.Reply{Text: "ok"} })
	home := codexHomeB(b, model.URL)
	e := agenttest.New(b, map[string]agent.Factory{"codex": func() (agent.Runtime, error) {
		rt := &codex.Runtime{Path: clis, Env: map[string]string{"CODEX_HOME": home}}
		b.Cleanup(func() { rt.Close() })
		return rt, nil
	}})
	direct := startDirect(b, clis, home, e.Workdir)

	var submit, lag time.Duration
	viaHostlink := func() {
		t0 := time.Now()
		id := e.Submit("codex", "hello", "read-only", nil)
		submit += time.Since(t0)
		for {
			t, err := e.Eng.Store().Get(id)
			if err != nil {
				b.Fatal(err)
			}
			if t.Status.Terminal() {
				lag += time.Since(t.Ended)
				if t.Status != agent.Completed {
					b.Fatalf("task %s: %s", t.Status, t.Reason)
				}
				return
			}
			// Not faster: a tight poll takes CPU from Codex itself.
			time.Sleep(2 * time.Millisecond)
		}
	}
	// Warm both: the first task starts hostlink's app-server.
	viaHostlink()
	direct.turn(b)

	var through, alone time.Duration
	b.ResetTimer()
	for i := range b.N {
		// Alternate which goes first, so neither always follows the other.
		runs := []func(){viaHostlink, func() { direct.turn(b) }}
		if i%2 == 1 {
			runs[0], runs[1] = runs[1], runs[0]
		}
		for j, run := range runs {
			t0 := time.Now()
			run()
			if (j == 0) == (i%2 == 0) {
				through += time.Since(t0)
			} else {
				alone += time.Since(t0)
			}
		}
	}
	b.StopTimer()
	n := float64(b.N)
	b.ReportMetric(float64(through.Microseconds())/n/1000, "hostlink-ms/turn")
	b.ReportMetric(float64(alone.Microseconds())/n/1000, "direct-ms/turn")
	b.ReportMetric(float64((through-alone).Microseconds())/n/1000, "overhead-ms/turn")
	b.ReportMetric(float64(submit.Microseconds())/n/1000, "submit-ms")
	b.ReportMetric(float64(lag.Microseconds())/n/1000, "lag-ms")
	b.ReportMetric(0, "ns/op")
}

func codexHomeB(b *testing.B, url string) string {
	home := b.TempDir()
	cfg := fmt.Sprintf("model = \"gpt-5.5\"\nmodel_provider = \"mock\"\n[features]\nremote_models = false\n"+
		"[model_providers.mock]\nname = \"mock\"\nbase_url = \"%s/v1\"\nwire_api = \"responses\"\nrequest_max_retries = 0\nstream_max_retries = 0\n", url)
	if err := os.WriteFile(home+"/config.toml", []byte(cfg), 0o600); err != nil {
		b.Fatal(err)
	}
	return home
}

// directServer is a `codex app-server` driven without hostlink.
type directServer struct {
	in   io.Writer
	out  *bufio.Reader
	next int
	cwd  string
}

func startDirect(b *testing.B, clis, home, cwd string) *directServer {
	argv, err := agentcli.Find(codex.Program, clis)
	if err != nil {
		b.Fatal(err)
	}
	cmd := exec.Command(argv[0], append(argv[1:], "app-server")...)
	cmd.Env = append(os.Environ(), "CODEX_HOME="+home, "NO_COLOR=1")
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { in.Close(); cmd.Wait() })
	s := &directServer{in: in, out: bufio.NewReaderSize(out, 1<<20), cwd: cwd}
	s.call(b, "initialize", map[string]any{"clientInfo": map[string]any{"name": "bench", "version": "1"},
		"capabilities": map[string]any{"experimentalApi": true}})
	s.send(b, map[string]any{"method": "initialized"})
	return s
}

func (s *directServer) send(b *testing.B, m map[string]any) {
	line, _ := json.Marshal(m)
	if _, err := s.in.Write(append(line, '\n')); err != nil {
		b.Fatal(err)
	}
}

// call sends a request and reads until its response, skipping
// notifications; it returns the result.
func (s *directServer) call(b *testing.B, method string, params any) json.RawMessage {
	s.next++
	id := s.next
	s.send(b, map[string]any{"id": id, "method": method, "params": params})
	for {
		m := s.read(b)
		if m.Method == "" && string(m.ID) == fmt.Sprint(id) {
			if m.Error != nil {
				b.Fatalf("%s: %s", method, m.Error)
			}
			return m.Result
		}
	}
}

type directMsg struct {
	ID     json.RawMessage `json:"id"`
	Method string          `json:"method"`
	Params json.RawMessage `json:"params"`
	Result json.RawMessage `json:"result"`
	Error  json.RawMessage `json:"error"`
}

func (s *directServer) read(b *testing.B) directMsg {
	line, err := s.out.ReadBytes('\n')
	if err != nil {
		b.Fatal(err)
	}
	var m directMsg
	json.Unmarshal(line, &m)
	return m
}

// turn runs one turn in a new thread, as hostlink runs a task.
func (s *directServer) turn(b *testing.B) {
	var th struct {
		Thread struct{ ID string } `json:"thread"`
	}
	json.Unmarshal(s.call(b, "thread/start", map[string]any{"cwd": s.cwd, "sandbox": "read-only", "approvalPolicy": "never"}), &th)
	s.call(b, "turn/start", map[string]any{"threadId": th.Thread.ID, "input": []any{map[string]any{"type": "text", "text": "hello"}}})
	for {
		if m := s.read(b); m.Method == "turn/completed" {
			return
		}
	}
}
