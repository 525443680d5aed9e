package config

import (
	"fmt"
	"path/filepath"
	"slices"
)

// Agents configures agent tasks (submit_agent_task and the other agent
// operations), which are off until the local user turns them on here and
// sets agent_mode on a workdir; no remote request can.
type Agents struct {
	Enabled                bool     `toml:"enabled"`
	Runtimes               []string `toml:"runtimes"`                 // runtimes that may run; see AgentRuntimes
	MaxConcurrentTasks     int      `toml:"max_concurrent_tasks"`     // unfinished tasks at once
	MaxPromptBytes         int      `toml:"max_prompt_bytes"`         // per prompt or message
	ApprovalTimeoutSeconds int      `toml:"approval_timeout_seconds"` // a pending approval or question expires after it
	TurnTimeoutSeconds     int      `toml:"turn_timeout_seconds"`     // a turn is interrupted after it
	MaxResultBytes         int64    `toml:"max_result_bytes"`         // longer final answers are cut
	// Limits on the runtime CLIs, which a busy machine makes slow.
	ProbeTimeoutSeconds  int `toml:"probe_timeout_seconds"`  // a readiness check (list_agent_runtimes, submit)
	ModelsTimeoutSeconds int `toml:"models_timeout_seconds"` // list_agent_models' wait for the runtime's list
	StartTimeoutSeconds  int `toml:"start_timeout_seconds"`  // starting a runtime, for a task or its model list
	// Where the runtime CLIs are: an executable, or a directory holding
	// the npm install; "" finds them on PATH.
	CodexPath  string `toml:"codex_path"`
	ClaudePath string `toml:"claude_path"`
	QoderPath  string `toml:"qoder_path"`
}

// AgentRuntimes are the runtime names agents.runtimes and
// workdirs[].agent_runtimes accept. "fake" is the test runtime: only a
// test wires in an adapter for it (package fakeruntime).
var AgentRuntimes = []string{"codex", "claude", "qoder", "fake"}

// AgentModes are the values of workdirs[].agent_mode; "" means disabled.
var AgentModes = []string{"disabled", "read-only", "workspace-write"}

func defaultAgents() Agents {
	return Agents{
		Runtimes:               []string{"codex", "claude", "qoder"},
		MaxConcurrentTasks:     4,
		MaxPromptBytes:         256 << 10,
		ApprovalTimeoutSeconds: 600,
		TurnTimeoutSeconds:     3600,
		MaxResultBytes:         64 << 20,
		ProbeTimeoutSeconds:    15,
		ModelsTimeoutSeconds:   60,
		StartTimeoutSeconds:    120,
	}
}

func (c *Config) fillAgentDefaults() {
	d := defaultAgents()
	if c.Agents.Runtimes == nil {
		c.Agents.Runtimes = d.Runtimes
	}
	setIfZero(&c.Agents.MaxConcurrentTasks, d.MaxConcurrentTasks)
	setIfZero(&c.Agents.MaxPromptBytes, d.MaxPromptBytes)
	setIfZero(&c.Agents.ApprovalTimeoutSeconds, d.ApprovalTimeoutSeconds)
	setIfZero(&c.Agents.TurnTimeoutSeconds, d.TurnTimeoutSeconds)
	setIfZero(&c.Agents.MaxResultBytes, d.MaxResultBytes)
	setIfZero(&c.Agents.ProbeTimeoutSeconds, d.ProbeTimeoutSeconds)
	setIfZero(&c.Agents.ModelsTimeoutSeconds, d.ModelsTimeoutSeconds)
	setIfZero(&c.Agents.StartTimeoutSeconds, d.StartTimeoutSeconds)
}

// AgentsOn reports whether agent operations are offered at all: enabled,
// and some workdir's agent_mode allows them.
func (c *Config) AgentsOn() bool {
	if !c.Agents.Enabled {
		return false
	}
	return slices.ContainsFunc(c.Workdirs, func(w Workdir) bool { return w.AgentMode != "" && w.AgentMode != "disabled" })
}

func (c *Config) agentProblems() []problem {
	var probs []problem
	checkNames := func(key string, names []string) {
		for i, n := range names {
			if !slices.Contains(AgentRuntimes, n) {
				probs = append(probs, keyProblem(fmt.Sprintf("%s[%d]", key, i), "unknown runtime %q: use one of %q", n, AgentRuntimes))
			}
		}
	}
	checkNames("agents.runtimes", c.Agents.Runtimes)
	for _, p := range [][2]string{{"agents.codex_path", c.Agents.CodexPath}, {"agents.claude_path", c.Agents.ClaudePath}, {"agents.qoder_path", c.Agents.QoderPath}} {
		if p[1] != "" && !filepath.IsAbs(p[1]) {
			probs = append(probs, keyProblem(p[0], "%q is not an absolute path", p[1]))
		}
	}
	for i, w := range c.Workdirs {
		key := fmt.Sprintf("workdirs[%d]", i)
		if w.AgentMode != "" && !slices.Contains(AgentModes, w.AgentMode) {
			probs = append(probs, keyProblem(key+".agent_mode", "%q is not one of %q", w.AgentMode, AgentModes))
		}
		if w.AgentMode == "workspace-write" && w.ReadOnly {
			probs = append(probs, keyProblem(key+".agent_mode", "workspace-write in a read_only workdir"))
		}
		checkNames(key+".agent_runtimes", w.AgentRuntimes)
	}
	const MiB = 1 << 20
	for _, b := range []bound{
		{"agents.max_concurrent_tasks", int64(c.Agents.MaxConcurrentTasks), 1, 64},
		{"agents.max_prompt_bytes", int64(c.Agents.MaxPromptBytes), 1, 4 * MiB},
		{"agents.approval_timeout_seconds", int64(c.Agents.ApprovalTimeoutSeconds), 1, 7 * 24 * 3600},
		{"agents.turn_timeout_seconds", int64(c.Agents.TurnTimeoutSeconds), 1, 7 * 24 * 3600},
		{"agents.max_result_bytes", c.Agents.MaxResultBytes, 1, 1 << 30},
		{"agents.probe_timeout_seconds", int64(c.Agents.ProbeTimeoutSeconds), 1, 600},
		{"agents.models_timeout_seconds", int64(c.Agents.ModelsTimeoutSeconds), 1, 3600},
		{"agents.start_timeout_seconds", int64(c.Agents.StartTimeoutSeconds), 1, 3600},
	} {
		if b.value < b.min || b.value > b.max {
			probs = append(probs, keyProblem(b.key, "%d is out of range: must be %d to %d", b.value, b.min, b.max))
		}
	}
	return probs
}
