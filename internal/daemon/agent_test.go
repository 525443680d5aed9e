package daemon

import (
	"os"
	"path/filepath"
	"testing"
)

var agentOps = []string{"list_agent_runtimes", "list_agent_models", "submit_agent_task", "get_agent_task",
	"read_agent_task_events", "read_agent_task_result", "respond_agent_approval", "answer_agent_question",
	"send_agent_message", "cancel_agent_task"}

// TestAgentsOffUnlessAllowed: the agent operations exist only when agents
// are enabled and a workdir's agent_mode allows them.
func TestAgentsOffUnlessAllowed(t *testing.T) {
	d, _ := openTemp(t)
	if d.Agents != nil {
		t.Fatal("an agent engine by default")
	}
	dir := "'" + t.TempDir() + "'"
	for name, cfg := range map[string]string{
		"enabled, no workdir allows": "[agents]\nenabled = true\n[[workdirs]]\nalias = \"a\"\npath = " + dir + "\n",
		"allowed, not enabled":       "[[workdirs]]\nalias = \"a\"\npath = " + dir + "\nagent_mode = \"read-only\"\n",
	} {
		home := t.TempDir()
		t.Setenv("HOSTLINK_HOME", home)
		p := filepath.Join(home, "config.toml")
		os.WriteFile(p, []byte(cfg), 0o600)
		d, err := Open(Options{ConfigPath: p})
		if err != nil {
			t.Fatal(err)
		}
		for _, op := range agentOps {
			if _, ok := d.Registry.Lookup(op); ok {
				t.Errorf("%s: %s is registered", name, op)
			}
		}
		d.Close()
	}
}
