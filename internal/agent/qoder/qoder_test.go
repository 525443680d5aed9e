package qoder_test

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/agent"
	"github.com/hostlink/hostlink/internal/agent/agenttest"
	"github.com/hostlink/hostlink/internal/agent/qoder"
	"github.com/hostlink/hostlink/internal/tstest"
)

// Qoder's model endpoint cannot be pointed at a local server (custom
// endpoints are an account switch on Qoder's side), so these tests use
// qodercli's own fake-responses mode: each model call takes the next line
// of a file, whatever the conversation. What the model is sent therefore
// cannot be checked through the model; the tool results in the task's
// events are what it is sent.

// reply is one model call's answer: text chunks and function calls.
func reply(text string, chunks int, calls ...map[string]any) string {
	var resp []any
	if text != "" {
		if chunks < 1 {
			chunks = 1
		}
		words := strings.SplitAfter(text, " ")
		per := max(len(words)/chunks, 1)
		for i := 0; i < len(words); i += per {
			part := strings.Join(words[i:min(i+per, len(words))], "")
			resp = append(resp, map[string]any{"candidates": []any{map[string]any{
				"content": map[string]any{"role": "model", "parts": []any{map[string]any{"text": part}}}}}})
		}
	}
	for _, c := range calls {
		resp = append(resp, map[string]any{"candidates": []any{map[string]any{
			"content": map[string]any{"role": "model", "parts": []any{map[string]any{"functionCall": c}}}}}})
	}
	last := resp[len(resp)-1].(map[string]any)["candidates"].([]any)[0].(map[string]any)
	last["finishReason"] = "STOP"
	b, _ := json.Marshal(map[string]any{"method": "generateContentStream", "response": resp})
	return string(b)
}

func call(name string, args map[string]any) map[string]any {
	return map[string]any{"name": name, "args": args}
}

// env is an engine whose qoder runtime answers with replies, one per
// model call, streaming chunks delay apart; replies may name the workdir
// as WORKDIR.
func env(t *testing.T, delay time.Duration, replies ...string) *agenttest.Env {
	t.Helper()
	return envTurnTimeout(t, 0, delay, replies...)
}

// envTurnTimeout is env with hostlink's turn deadline set to d (0: the
// test default).
func envTurnTimeout(t *testing.T, d, delay time.Duration, replies ...string) *agenttest.Env {
	t.Helper()
	clis := agenttest.CLIs(t)
	file := filepath.Join(t.TempDir(), "fake.jsonl")
	// A throwaway HOME (qodercli writes ~/.qoder) and TMPDIR per engine.
	home, tmp := t.TempDir(), t.TempDir()
	seedMachineID(t, home)
	stderr := agenttest.Stderr(t, "qodercli")
	// qodercli's own log says where a slow start or turn spent its time.
	agenttest.LogFiles(t, "qodercli", filepath.Join(home, ".qoder", "logs", "runs", "*", "qodercli.log"), func(l []byte) bool {
		return len(l) > 24 && l[4] == '-' && l[10] == 'T' && !bytes.Contains(l, []byte("[API Network Attempts]"))
	})
	e := agenttest.New(t, map[string]agent.Factory{"qoder": func() (agent.Runtime, error) {
		rt := &qoder.Runtime{Path: clis,
			Args: []string{"--fake-responses", file, "--settings", `{"security":{"auth":{"useExternal":true}}}`},
			Env:  map[string]string{"HOME": home, "TMPDIR": tmp, "QODER_FAKE_STREAM_DELAY_MS": fmt.Sprint(delay.Milliseconds())}}
		rt.Stderr = stderr
		return rt, nil
	}}, func(o *agent.Options) {
		if d > 0 {
			o.Limits.TurnTimeout = d
		}
	})
	e.QueueIfNotReady = true // qodercli status knows nothing of --fake-responses
	wd, _ := json.Marshal(e.Workdir)
	text := strings.ReplaceAll(strings.Join(replies, "\n")+"\n", "WORKDIR", strings.Trim(string(wd), `"`))
	if err := os.WriteFile(file, []byte(text), 0o600); err != nil {
		t.Fatal(err)
	}
	return e
}

// seedMachineID gives home the machine id qodercli writes on its first run
// in a HOME, as a user's HOME has it. Creating the id takes a lock shared
// by every qodercli of that HOME (~/.qoder/.auth), and a lock its holder
// left behind is taken over only once it is two minutes old: measured,
// a start in a HOME holding such a lock and no id waited 116 s before
// its turn could end, while with an id present it never takes the lock.
// Each test's HOME is new, so without the id every test started on that
// path; a CI run's first model answer once came two minutes late, which
// this wait would explain (the run left no qodercli log to say; a failed
// test now logs it).
func seedMachineID(t *testing.T, home string) {
	t.Helper()
	var b [16]byte
	rand.Read(b[:])
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80
	id := fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:])
	dir := filepath.Join(home, ".qoder", ".auth")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "machine_id"), []byte(id), 0o600); err != nil {
		t.Fatal(err)
	}
}

func TestQoderReadiness(t *testing.T) {
	t.Parallel()
	e := env(t, 0, reply("x", 1))
	var rt map[string]any
	tstest.Eventually(2*time.Minute, func() bool {
		rt = e.Runtime()
		return !strings.Contains(rt["reason"].(string), "ask again")
	})
	if rt["installed"] != true || rt["version"] != qoder.TestedVersion || rt["authenticated"] != false ||
		rt["ready"] != false || !strings.HasPrefix(rt["reason"].(string), "not logged in") {
		t.Fatalf("runtime: %v", rt)
	}
}

func TestQoderPlain(t *testing.T) {
	t.Parallel()
	e := env(t, 0, reply("plain answer", 1))
	id := e.Submit("qoder", "hello", "read-only", nil)
	if got := e.Completed(id); got != "plain answer" {
		t.Fatalf("result %q\n%s", got, e.Dump(id))
	}
}

// TestQoderApprovals: a command and a file change each wait for an
// approval, and run only when it is accepted.
func TestQoderApprovals(t *testing.T) {
	cases := []struct {
		name  string
		model string // the model's tool call
		agenttest.Approval
	}{
		{"command", reply("", 0, call("Bash", map[string]any{"command": "echo ran > ran.txt", "description": "write ran.txt"})),
			agenttest.Approval{Prompt: "run it", Asks: "echo ran", Result: "command finished", File: "ran.txt"}},
		{"file change", reply("", 0, call("Write", map[string]any{"file_path": "WORKDIR/written.txt", "content": "written\n"})),
			agenttest.Approval{Prompt: "write it", Asks: "Write", Result: "write finished", File: "written.txt"}},
	}
	for _, c := range cases {
		for _, accept := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s accepted=%v", c.name, accept), func(t *testing.T) {
				t.Parallel()
				env(t, 0, c.model, reply(c.Result, 1)).RunApproval("qoder", c.Approval, accept)
			})
		}
		// qodercli answered cancel goes on to its next model call and
		// completes the turn: hostlink makes it cancelled all the same.
		t.Run(c.name+" cancelled", func(t *testing.T) {
			t.Parallel()
			env(t, 0, c.model, reply(c.Result, 1)).RunApprovalCancel("qoder", c.Approval)
		})
	}
}

// Questions: qodercli -p does not offer its AskUserQuestion tool (only
// its SDK entry point does, which needs an SDK auth payload), so a Qoder
// task cannot ask; the stream-json question path is tested with Claude.

// TestQoderSteer: a steer stops the slow stream and its message is
// answered in the same turn.
func TestQoderSteer(t *testing.T) {
	t.Parallel()
	e := env(t, 300*time.Millisecond, reply(strings.Repeat("working ", 100), 100), reply("steered ok", 1))
	id := e.Submit("qoder", "work", "read-only", nil)
	e.WaitDelta(id)
	e.Must("send_agent_message", map[string]any{"task_id": id, "text": "STEERED", "mode": "steer"})
	if got := e.Completed(id); !strings.Contains(got, "steered ok") {
		t.Fatalf("result %q\n%s", got, e.Dump(id))
	}
}

// TestQoderCancel: a cancel interrupts the slow stream; the task ends
// cancelled.
func TestQoderCancel(t *testing.T) {
	t.Parallel()
	e := env(t, time.Second, reply(strings.Repeat("slow ", 100), 100))
	e.Cancel(e.Submit("qoder", "go slowly", "workspace-write", nil))
}

// TestQoderRestart: after a restart the session resumes (--resume) under
// its id. With fake responses the model cannot show it saw the history.
func TestQoderRestart(t *testing.T) {
	t.Parallel()
	e := env(t, 0, reply("noted", 1), reply("recalled", 1))
	first := e.Submit("qoder", "remember PINEAPPLE", "read-only", nil)
	if got := e.Completed(first); got != "noted" {
		t.Fatalf("result %q", got)
	}
	sid := e.Must("get_agent_task", map[string]any{"task_id": first})["session_id"]
	e.Restart()
	next := e.Submit("qoder", "recall", "read-only", map[string]any{"continue_task_id": first})
	e.End(next, 2*time.Minute)
	if got := e.Must("get_agent_task", map[string]any{"task_id": next})["session_id"]; got != sid {
		t.Fatalf("session %v, want %v\n%s", got, sid, e.Dump(next))
	}
}

// TestQoderUnresponsiveModel: a model that never finishes its stream ends
// the turn at hostlink's turn deadline.
func TestQoderUnresponsiveModel(t *testing.T) {
	t.Parallel()
	e := envTurnTimeout(t, 5*time.Second, 10*time.Minute, reply("never ending", 2))
	e.WantTurnTimeout("qoder", "hello")
}
