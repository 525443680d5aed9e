package config

import (
	"strings"
	"testing"
)

func TestAgentsConfig(t *testing.T) {
	// An absolute path on every OS; TOML literal strings keep backslashes.
	dir := "'" + t.TempDir() + "'"
	ok := "[[workdirs]]\nalias = \"a\"\npath = " + dir + "\nagent_mode = \"workspace-write\"\nagent_runtimes = [\"codex\"]\n" +
		"[[workdirs]]\nalias = \"b\"\npath = " + dir + "\n" +
		"[agents]\nenabled = true\nruntimes = [\"codex\", \"fake\"]\n"
	c, err := parse([]byte(ok), "c.toml", t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	if !c.AgentsOn() || c.Workdirs[0].AgentMode != "workspace-write" || c.Agents.MaxConcurrentTasks != 4 ||
		len(c.Agents.Runtimes) != 2 || c.Workdirs[1].AgentMode != "" {
		t.Fatalf("parsed: %+v", c)
	}
	if Default().AgentsOn() {
		t.Fatal("agents are on by default")
	}
	c.Agents.Enabled = false
	if c.AgentsOn() {
		t.Fatal("agents on while disabled")
	}

	wd := "[[workdirs]]\nalias = \"a\"\npath = " + dir + "\n"
	for doc, want := range map[string]string{
		"[agents]\nenabeld = true\n":                                `unknown key "agents.enabeld"`,
		"[agents]\nruntimes = [\"gpt\"]\n":                          `agents.runtimes[0]: unknown runtime "gpt"`,
		"[agents]\nmax_concurrent_tasks = 100\n":                    "agents.max_concurrent_tasks: 100 is out of range",
		wd + "agent_mode = \"write\"\n":                             `workdirs[0].agent_mode: "write" is not one of`,
		wd + "read_only = true\nagent_mode = \"workspace-write\"\n": "workspace-write in a read_only workdir",
		wd + "agent_runtimes = [\"x\"]\n":                           `workdirs[0].agent_runtimes[0]: unknown runtime "x"`,
	} {
		_, err := parse([]byte(doc), "c.toml", t.TempDir())
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: %v, want %q", doc, err, want)
		}
	}
}
