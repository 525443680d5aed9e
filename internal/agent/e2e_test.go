package agent_test

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/hostlink/hostlink/internal/agent"
	"github.com/hostlink/hostlink/internal/agentapi"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/lease"
	"github.com/hostlink/hostlink/internal/tstest"
)

// script is one turn of the fake runtime: it streams, asks for approval,
// asks a question, works (steerable) until steered, writes a file, names
// host paths, and answers.
const script = `say hello from the fake runtime
items 2
approve go test ./...
ask continue?
sleep 30000
write out.txt done
path
result all good`

// TestEndToEnd runs a whole task through MCP and through the control
// channel: submit, streamed events, an approval (answered with an
// object-shaped decision hostlink does not know), a question, a steer, the
// result; plus idempotent resubmission, a conflicting one, and the writer
// lease against write_file.
func TestEndToEnd(t *testing.T) { overTransports(t, nil, endToEnd) }

func endToEnd(t *testing.T, e *env, c caller) {
	rts := must(t, c, "list_agent_runtimes", nil)["runtimes"].([]any)
	if len(rts) != 1 || rts[0].(map[string]any)["ready"] != true || rts[0].(map[string]any)["version"] != "fake-1.0" {
		t.Fatalf("runtimes: %v", rts)
	}
	models := must(t, c, "list_agent_models", map[string]any{"runtime": "fake"})
	if models["supported"] != true || len(models["models"].([]any)) != 2 {
		t.Fatalf("models: %v", models)
	}

	submit := map[string]any{"runtime": "fake", "workdir": "a", "prompt": script, "access": "workspace-write", "idempotency_key": "k1"}
	task := must(t, c, "submit_agent_task", submit)
	id := task["task_id"].(string)
	if task["existing"] != false || !strings.HasPrefix(id, "task_") {
		t.Fatalf("submit: %v", task)
	}
	again := must(t, c, "submit_agent_task", submit)
	if again["task_id"] != id || again["existing"] != true {
		t.Fatalf("idempotent resubmit: %v", again)
	}
	changed := map[string]any{"runtime": "fake", "workdir": "a", "prompt": "say other", "access": "workspace-write", "idempotency_key": "k1"}
	if _, code := c("submit_agent_task", changed); code != agent.CodeIdempotencyConflict {
		t.Fatalf("changed resubmit: %q", code)
	}

	// The approval, with every decision as the runtime offered it.
	task = waitFor(t, c, id, "an approval", pendingKind("approval"))
	if task["status"] != "waiting_approval" {
		t.Fatalf("status while an approval is pending: %v", task["status"])
	}
	p := task["pending"].([]any)[0].(map[string]any)
	rid := p["request_id"].(string)
	var unknown any
	for _, d := range p["decisions"].([]any) {
		d := d.(map[string]any)
		if _, isObject := d["value"].(map[string]any); isObject {
			if d["known"] != false {
				t.Errorf("an object-shaped decision is marked known: %v", d)
			}
			unknown = d["value"]
		}
	}
	if unknown == nil || len(p["decisions"].([]any)) != 5 {
		t.Fatalf("offered decisions: %v", p["decisions"])
	}

	// While the task holds workdir a's lease, hostlink's own writes there
	// fail fast; workdir b is untouched.
	if _, code := c("write_file", map[string]any{"workdir": "a", "path": "x.txt", "content": "x"}); code != lease.CodeBusy {
		t.Fatalf("write_file in a during the task: %q", code)
	}
	must(t, c, "write_file", map[string]any{"workdir": "b", "path": "x.txt", "content": "x"})
	if _, code := c("submit_agent_task", map[string]any{"runtime": "fake", "workdir": "a", "prompt": "say hi", "access": "workspace-write"}); code != lease.CodeBusy {
		t.Fatalf("a second writer task in a: %q", code)
	}

	if _, code := c("respond_agent_approval", map[string]any{"task_id": id, "request_id": rid, "decision": "approve-everything"}); code != agent.CodeDecisionNotOffered {
		t.Fatalf("a decision not offered: %q", code)
	}
	must(t, c, "respond_agent_approval", map[string]any{"task_id": id, "request_id": rid, "decision": unknown})
	if _, code := c("respond_agent_approval", map[string]any{"task_id": id, "request_id": rid, "decision": "accept"}); code != agent.CodeRequestResolved {
		t.Fatalf("answering twice: %q", code)
	}

	task = waitFor(t, c, id, "a question", pendingKind("question"))
	q := task["pending"].([]any)[0].(map[string]any)
	if task["status"] != "waiting_input" {
		t.Fatalf("status while a question is pending: %v", task["status"])
	}
	qa := map[string]any{"task_id": id, "request_id": q["request_id"], "answers": map[string]any{"q9": []string{"yes"}}}
	if _, code := c("answer_agent_question", qa); code != errcode.InvalidArgument {
		t.Fatalf("an answer to no question: %q", code)
	}
	qa["answers"] = map[string]any{"q1": []string{"yes, go on"}}
	must(t, c, "answer_agent_question", qa)

	// The turn now works until steered.
	waitForEvent(t, c, id, "answer: yes, go on")
	must(t, c, "send_agent_message", map[string]any{"task_id": id, "text": "wrap up", "mode": "steer"})
	task = waitFor(t, c, id, "completion", func(m map[string]any) bool { return m["terminal"] == true })
	if task["status"] != "completed" || task["turns"].(float64) != 1 {
		t.Fatalf("final task: %v", task)
	}
	if b, err := os.ReadFile(filepath.Join(e.w.dirs["a"], "out.txt")); err != nil || string(b) != "done" {
		t.Fatalf("the runtime's write: %q %v", b, err)
	}
	must(t, c, "write_file", map[string]any{"workdir": "a", "path": "x.txt", "content": "after"})

	res := must(t, c, "read_agent_task_result", map[string]any{"task_id": id})
	if res["text"] != "all good" || res["eof"] != true {
		t.Fatalf("result: %v", res)
	}

	evs := allEvents(t, c, id, 7)
	var types []string
	var texts []string
	for i, ev := range evs {
		if ev["seq"].(float64) != float64(i+1) || ev["schema_version"].(float64) != agentapi.EventSchema || ev["task_id"] != id {
			t.Fatalf("event %d: %v", i, ev)
		}
		types = append(types, ev["type"].(string))
		if d, ok := ev["data"].(map[string]any); ok {
			b, _ := json.Marshal(d)
			texts = append(texts, string(b))
		}
		if strings.HasPrefix(ev["type"].(string), "item.") && (ev["turn_id"] == "" || ev["session_id"] == "" || ev["item_id"] == "") {
			t.Errorf("item event without correlation ids: %v", ev)
		}
	}
	for _, want := range []string{"task.queued", "task.status", "session.started", "turn.started", "item.delta",
		"approval.requested", "approval.resolved", "question.asked", "question.answered", "message.steered",
		"turn.ended", "task.result"} {
		if !slices.Contains(types, want) {
			t.Errorf("no %s event in %v", want, types)
		}
	}
	all := strings.Join(texts, "\n")
	for _, want := range []string{"steered: wrap up", "acceptWithExecpolicyAmendment", "[host path]", "a:inside.txt", "a:out.txt"} {
		if !strings.Contains(all, want) {
			t.Errorf("events do not mention %q", want)
		}
	}
	if strings.Contains(all, e.w.base) || strings.Contains(all, os.TempDir()) {
		t.Errorf("events name host paths:\n%s", all)
	}

	full := must(t, c, "get_agent_task", map[string]any{"task_id": id, "include_manifest": true})
	canon, _ := json.Marshal(full["manifest"])
	m := full["manifest"].(map[string]any)
	sum := sha256.Sum256(canon)
	if hex.EncodeToString(sum[:]) != full["manifest_sha256"] || m["policy_fingerprint"] != full["policy_fingerprint"] ||
		m["access"] != "workspace-write" || m["workdir"] != "a" {
		t.Fatalf("manifest %s does not match its hash %v", canon, full["manifest_sha256"])
	}
}

// waitForEvent waits for an item event that mentions text.
func waitForEvent(t *testing.T, c caller, id, text string) {
	t.Helper()
	tstest.WaitFor(t, 30*time.Second, fmt.Sprintf("an event that mentions %q", text), func() bool {
		for _, ev := range allEvents(t, c, id, 500) {
			if b, _ := json.Marshal(ev["data"]); strings.HasPrefix(ev["type"].(string), "item.") && strings.Contains(string(b), text) {
				return true
			}
		}
		return false
	})
}

// overTransports runs f with a client of each transport.
func overTransports(t *testing.T, tweak func(*agent.Options), f func(t *testing.T, e *env, c caller)) {
	for _, transport := range []string{"mcp", "ipc"} {
		t.Run(transport, func(t *testing.T) {
			var e *env
			if tweak != nil {
				e = newEnv(t, tweak)
			} else {
				e = newEnv(t)
			}
			c := e.mcpCaller()
			if transport == "ipc" {
				c = e.ipcCaller()
			}
			f(t, e, c)
		})
	}
}

func TestCancelMidTurn(t *testing.T) { overTransports(t, nil, cancelMidTurn) }

func cancelMidTurn(t *testing.T, e *env, c caller) {
	id := must(t, c, "submit_agent_task", map[string]any{"runtime": "fake", "workdir": "a", "prompt": "say working\nsleep 60000", "access": "workspace-write"})["task_id"].(string)
	waitForEvent(t, c, id, "working")
	must(t, c, "cancel_agent_task", map[string]any{"task_id": id})
	task := waitFor(t, c, id, "cancelled", func(m map[string]any) bool { return m["terminal"] == true })
	if task["status"] != "cancelled" || task["reason"] != "cancelled by request" {
		t.Fatalf("after cancel: %v", task)
	}
	must(t, c, "cancel_agent_task", map[string]any{"task_id": id}) // cancelling again is fine
	if _, code := c("send_agent_message", map[string]any{"task_id": id, "text": "more"}); code != agent.CodeInvalidState {
		t.Fatalf("steering a cancelled task: %q", code)
	}
	if _, code := c("read_agent_task_result", map[string]any{"task_id": id}); code != agent.CodeResultUnavailable {
		t.Fatalf("result of a cancelled task: %q", code)
	}
	must(t, c, "write_file", map[string]any{"workdir": "a", "path": "x.txt", "content": "lease released"})
}

func TestExpiredApprovalIsRefused(t *testing.T) {
	overTransports(t, func(o *agent.Options) { o.Limits.ApprovalTimeout = 300 * time.Millisecond }, expiredApproval)
}

func expiredApproval(t *testing.T, _ *env, c caller) {
	id := must(t, c, "submit_agent_task", map[string]any{"runtime": "fake", "workdir": "b", "prompt": "approve rm -rf build"})["task_id"].(string)
	p := waitFor(t, c, id, "an approval", pendingKind("approval"))["pending"].([]any)[0].(map[string]any)
	time.Sleep(400 * time.Millisecond)
	if _, code := c("respond_agent_approval", map[string]any{"task_id": id, "request_id": p["request_id"], "decision": "accept"}); code != agent.CodeRequestExpired {
		t.Fatalf("answering an expired approval: %q", code)
	}
	task := waitFor(t, c, id, "the end", func(m map[string]any) bool { return m["terminal"] == true })
	if task["status"] != "failed" || !strings.Contains(task["reason"].(string), "expired") {
		t.Fatalf("a task whose approval expired: %v", task)
	}
}

func TestFollowUpTurn(t *testing.T) {
	e := newEnv(t)
	c := e.direct()
	id := must(t, c, "submit_agent_task", map[string]any{"runtime": "fake", "workdir": "b", "prompt": "say first\nsleep 60000"})["task_id"].(string)
	waitForEvent(t, c, id, "first")
	must(t, c, "send_agent_message", map[string]any{"task_id": id, "text": "say second\nresult two turns", "mode": "follow_up"})
	must(t, c, "send_agent_message", map[string]any{"task_id": id, "text": "finish"})
	task := waitFor(t, c, id, "the end", func(m map[string]any) bool { return m["terminal"] == true })
	if task["status"] != "completed" || task["turns"].(float64) != 2 {
		t.Fatalf("after a follow-up: %v", task)
	}
	if res := must(t, c, "read_agent_task_result", map[string]any{"task_id": id}); res["text"] != "two turns" {
		t.Fatalf("result: %v", res)
	}
}

func TestRuntimeCrashMidTurn(t *testing.T) {
	e := newEnv(t)
	c := e.direct()
	id := must(t, c, "submit_agent_task", map[string]any{"runtime": "fake", "workdir": "a", "prompt": "say about to crash\ncrash", "access": "workspace-write"})["task_id"].(string)
	task := waitFor(t, c, id, "the end", func(m map[string]any) bool { return m["terminal"] == true })
	if task["status"] != "failed" || !strings.Contains(task["reason"].(string), "exited mid-turn") {
		t.Fatalf("after the runtime crashed: %v", task)
	}
	// The engine cleaned up after its runtime: no recovery needed.
	must(t, c, "write_file", map[string]any{"workdir": "a", "path": "x.txt", "content": "x"})
}

func TestFailedTurn(t *testing.T) {
	e := newEnv(t)
	c := e.direct()
	id := must(t, c, "submit_agent_task", map[string]any{"runtime": "fake", "workdir": "b", "prompt": "fail the model is unreachable"})["task_id"].(string)
	task := waitFor(t, c, id, "the end", func(m map[string]any) bool { return m["terminal"] == true })
	if task["status"] != "failed" || !strings.Contains(task["reason"].(string), "unreachable") {
		t.Fatalf("a failed turn: %v", task)
	}
}

func TestLargeResultInChunks(t *testing.T) {
	e := newEnv(t)
	c := e.direct()
	id := must(t, c, "submit_agent_task", map[string]any{"runtime": "fake", "workdir": "b", "prompt": "bigresult 300000"})["task_id"].(string)
	task := waitFor(t, c, id, "the end", func(m map[string]any) bool { return m["terminal"] == true })
	if task["status"] != "completed" {
		t.Fatalf("task: %v", task)
	}
	var all strings.Builder
	var off float64
	for {
		chunk := must(t, c, "read_agent_task_result", map[string]any{"task_id": id, "offset": off, "max_bytes": 1000})
		text := chunk["text"].(string)
		if !utf8.ValidString(text) || len(text) > 1000 {
			t.Fatalf("chunk at %v is %d bytes, valid UTF-8 %v", off, len(text), utf8.ValidString(text))
		}
		all.WriteString(text)
		off = chunk["next_offset"].(float64)
		if chunk["eof"] == true {
			sum := sha256.Sum256([]byte(all.String()))
			if hex.EncodeToString(sum[:]) != chunk["sha256"] || float64(all.Len()) != chunk["total_bytes"] {
				t.Fatalf("the chunks do not add up to the result")
			}
			break
		}
	}
	if _, code := c("read_agent_task_result", map[string]any{"task_id": id, "offset": 2}); code != errcode.InvalidArgument {
		t.Fatalf("an offset inside a character: %q", code) // "hé": é starts at byte 1
	}
}

func TestPolicyRefusals(t *testing.T) {
	e := newEnv(t)
	c := e.direct()
	for _, tc := range []struct {
		args map[string]any
		want errcode.Code
	}{
		{map[string]any{"runtime": "fake", "workdir": "b", "prompt": "x", "access": "workspace-write"}, agent.CodeAgentNotAllowed},
		{map[string]any{"runtime": "fake", "workdir": "c", "prompt": "x"}, agent.CodeAgentNotAllowed},
		{map[string]any{"runtime": "codex", "workdir": "a", "prompt": "x"}, agent.CodeRuntimeUnavailable},
		{map[string]any{"runtime": "fake", "workdir": "a", "prompt": "x", "cwd": "../elsewhere"}, errcode.PathOutsideRoot},
		{map[string]any{"runtime": "fake", "workdir": "a", "prompt": "x", "cwd": e.w.dirs["b"]}, errcode.InvalidArgument},
		{map[string]any{"runtime": "fake", "workdir": "a", "prompt": "x", "cwd": "missing"}, errcode.PathNotFound},
		{map[string]any{"runtime": "fake", "workdir": "a", "prompt": ""}, errcode.InvalidArgument},
		{map[string]any{"runtime": "fake", "workdir": "a", "prompt": "x", "access": "root"}, errcode.InvalidArgument},
		{map[string]any{"runtime": "fake", "workdir": "zz", "prompt": "x"}, errcode.UnknownWorkdir},
		{map[string]any{"runtime": "fake", "prompt": "x"}, errcode.InvalidArgument},
	} {
		if _, code := c("submit_agent_task", tc.args); code != tc.want {
			t.Errorf("submit %v: %q, want %q", tc.args, code, tc.want)
		}
	}
	// An unknown workdir is the same error for agents as for files.
	if _, code := c("read_file", map[string]any{"workdir": "zz", "path": "x"}); code != errcode.UnknownWorkdir {
		t.Errorf("read_file in an unknown workdir: %q", code)
	}
	if _, code := c("get_agent_task", map[string]any{"task_id": "task_nope"}); code != agent.CodeTaskNotFound {
		t.Errorf("an unknown task: %q", code)
	}
	if _, code := c("list_agent_models", map[string]any{"runtime": "claude"}); code != agent.CodeRuntimeUnavailable {
		t.Errorf("models of a runtime with no adapter: %q", code)
	}
}

func TestReadOnlyTaskCannotWrite(t *testing.T) {
	e := newEnv(t)
	c := e.direct()
	id := must(t, c, "submit_agent_task", map[string]any{"runtime": "fake", "workdir": "a", "prompt": "write f.txt x"})["task_id"].(string)
	task := waitFor(t, c, id, "the end", func(m map[string]any) bool { return m["terminal"] == true })
	if task["status"] != "failed" || !strings.Contains(task["reason"].(string), "read-only") {
		t.Fatalf("a read-only task writing: %v", task)
	}
	if _, err := os.Stat(filepath.Join(e.w.dirs["a"], "f.txt")); err == nil {
		t.Fatal("a read-only task wrote")
	}
}
