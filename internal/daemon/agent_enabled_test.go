//go:build !windows

package daemon

import (
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/agent"
	"github.com/hostlink/hostlink/internal/agent/fakeruntime"
	"github.com/hostlink/hostlink/internal/apitype"
	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/lease"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/tstest"
)

// TestAgentsEnabled wires the engine as serve does, with the fake runtime
// built as its own program: the ten operations are registered, a writer
// task's lease refuses write_file in its workdir through the daemon's file
// service, and closing the daemon ends the task as cancelled.
func TestAgentsEnabled(t *testing.T) {
	prog := filepath.Join(t.TempDir(), "fakeagent")
	if out, err := exec.Command("go", "build", "-o", prog, "../agent/fakeruntime/fakeagent").CombinedOutput(); err != nil {
		t.Fatalf("building the fake runtime: %v\n%s", err, out)
	}
	runtimes := map[string]agent.Factory{fakeruntime.Name: func() (agent.Runtime, error) {
		return &fakeruntime.Runtime{Argv: []string{prog}}, nil
	}}
	home := t.TempDir()
	t.Setenv("HOSTLINK_HOME", home)
	work := filepath.Join(home, "w")
	os.MkdirAll(work, 0o755)
	cfg := filepath.Join(home, "config.toml")
	os.WriteFile(cfg, []byte("[agents]\nenabled = true\nruntimes = [\"fake\"]\n[[workdirs]]\nalias = \"w\"\npath = '"+work+"'\nagent_mode = \"workspace-write\"\n[policy]\nfiles_write = \"allow\"\nagents = \"allow\"\nplatform_folders = \"allow\"\n"), 0o600)
	d, err := Open(Options{ConfigPath: cfg, Runtimes: runtimes})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, op := range agentOps {
		if _, ok := d.Registry.Lookup(op); !ok {
			t.Errorf("%s is not registered", op)
		}
	}
	call := func(op, args string) (map[string]any, error) {
		out, err := d.Registry.Call(context.Background(), ops.Caller{Transport: audit.MCPStdio}, op, []byte(args), nil)
		var m map[string]any
		b, _ := json.Marshal(out)
		json.Unmarshal(b, &m)
		return m, err
	}
	task, err := call("submit_agent_task", `{"runtime":"fake","workdir":"w","prompt":"say hi\nsleep 60000","access":"workspace-write"}`)
	if err != nil {
		t.Fatal(err)
	}
	id := task["task_id"].(string)
	var got map[string]any
	if !tstest.Eventually(20*time.Second, func() bool {
		var err error
		if got, err = call("get_agent_task", `{"task_id":"`+id+`"}`); err != nil {
			t.Fatal(err)
		}
		return got["turns"].(float64) == 1
	}) {
		t.Fatalf("the task never started a turn: %v", got)
	}
	st := d.Status()
	if len(st.Tasks) != 1 || st.Tasks[0].ID != id || !slices.ContainsFunc(st.Capabilities, func(c apitype.CapabilityStatus) bool { return c.Name == "agents" && c.Ready }) {
		t.Fatalf("status: tasks %+v, capabilities %+v", st.Tasks, st.Capabilities)
	}
	// A platform session's registry carries the agent operations too; they
	// see the configured workdirs, not the session's folder.
	rt, err := d.SessionRuntime(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	out, err := rt.Registry.Call(context.Background(), ops.Caller{Transport: audit.Link}, "get_agent_task", []byte(`{"task_id":"`+id+`"}`), nil)
	if err != nil || out == nil {
		t.Fatalf("get_agent_task through a session's registry: %v %v", out, err)
	}
	rt.Close()
	if _, err := call("write_file", `{"workdir":"w","path":"x.txt","content":"x"}`); errcode.CodeOf(err) != lease.CodeBusy {
		t.Fatalf("write_file beside a writer task: %v", err)
	}
	d.Close()
	d2, err := Open(Options{ConfigPath: cfg, Runtimes: runtimes})
	if err != nil {
		t.Fatal(err)
	}
	defer d2.Close()
	task2, _, err := d2.Agents.Get(id)
	if err != nil || task2.Status != "cancelled" || task2.Reason != "hostlink is shutting down" {
		t.Fatalf("after the daemon closed: %+v %v", task2, err)
	}
	if _, err := d2.Registry.Call(context.Background(), ops.Caller{Transport: audit.MCPStdio}, "write_file", []byte(`{"workdir":"w","path":"x.txt","content":"x"}`), nil); err != nil {
		t.Fatalf("write_file after an orderly stop: %v", err)
	}
}
