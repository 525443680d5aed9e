package agent_test

import (
	"testing"

	"github.com/hostlink/hostlink/internal/agent"
)

// TestContinueTask: continue_task_id resumes a finished task's session in
// a new task; a running task, another workdir or runtime, or an unknown
// task cannot be continued.
func TestContinueTask(t *testing.T) {
	e := newEnv(t)
	c := e.direct()
	first := must(t, c, "submit_agent_task", map[string]any{"runtime": "fake", "workdir": "a", "prompt": "result one"})["task_id"].(string)
	done := waitFor(t, c, first, "completed", statusIs("completed"))

	busy := must(t, c, "submit_agent_task", map[string]any{"runtime": "fake", "workdir": "a", "prompt": "sleep 30000"})["task_id"].(string)
	waitFor(t, c, busy, "running", statusIs("running"))
	for _, tc := range []struct {
		name string
		args map[string]any
		want string
	}{
		{"running", map[string]any{"workdir": "a", "continue_task_id": busy}, string(agent.CodeInvalidState)},
		{"other workdir", map[string]any{"workdir": "b", "continue_task_id": first}, string(agent.CodeInvalidState)},
		{"unknown", map[string]any{"workdir": "a", "continue_task_id": "task_NOPE"}, string(agent.CodeTaskNotFound)},
	} {
		args := map[string]any{"runtime": "fake", "prompt": "result two"}
		for k, v := range tc.args {
			args[k] = v
		}
		if _, code := c("submit_agent_task", args); string(code) != tc.want {
			t.Errorf("%s: %q, want %s", tc.name, code, tc.want)
		}
	}
	must(t, c, "cancel_agent_task", map[string]any{"task_id": busy})

	next := must(t, c, "submit_agent_task", map[string]any{"runtime": "fake", "workdir": "a", "prompt": "result two",
		"continue_task_id": first})["task_id"].(string)
	got := waitFor(t, c, next, "completed", statusIs("completed"))
	if got["session_id"] != done["session_id"] {
		t.Fatalf("session %v, want %v", got["session_id"], done["session_id"])
	}
}
