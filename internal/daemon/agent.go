package daemon

import (
	"fmt"
	"maps"
	"path/filepath"
	"time"

	"github.com/hostlink/hostlink/internal/agent"
	agentruntimes "github.com/hostlink/hostlink/internal/agent/runtimes"
	"github.com/hostlink/hostlink/internal/apitype"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/sandbox"
	"github.com/hostlink/hostlink/internal/version"
)

// AgentsDir is the agent engine's private state directory.
func AgentsDir(state string) string { return filepath.Join(state, "agents") }

// openAgents opens the agent engine when the local user enabled agents and
// some workdir allows them: it reconciles tasks a previous hostlink left
// unfinished. assemble then guards every registry's file mutations with
// the workdir writer leases and registers the agent operations; without
// the engine nothing is registered, so no transport offers them. extra
// adds runtimes beside the real CLIs' (tests: the fake runtime).
func (d *Daemon) openAgents(extra map[string]agent.Factory) error {
	cfg := d.Config
	if !cfg.AgentsOn() {
		return nil
	}
	// Runtime adapters are created at first use, so an absent or broken
	// runtime never stops the others or hostlink.
	runtimes := agentruntimes.Factories(agentruntimes.Paths{Codex: cfg.Agents.CodexPath, Claude: cfg.Agents.ClaudePath, Qoder: cfg.Agents.QoderPath,
		Sandbox: d.agentSandbox()})
	maps.Copy(runtimes, extra)
	var policies []agent.WorkdirPolicy
	for _, w := range cfg.Workdirs {
		mode := w.AgentMode
		if mode == "" {
			mode = agent.ModeDisabled
		}
		policies = append(policies, agent.WorkdirPolicy{Alias: w.Alias, Mode: mode, Runtimes: w.AgentRuntimes})
	}
	a := cfg.Agents
	eng, err := agent.Open(agent.Options{
		Dir:      AgentsDir(d.Dirs.State),
		Files:    d.Files,
		Workdirs: policies,
		Runtimes: runtimes,
		Allowed:  a.Runtimes,
		Limits: agent.Limits{
			MaxConcurrent:   a.MaxConcurrentTasks,
			MaxPromptBytes:  a.MaxPromptBytes,
			ApprovalTimeout: time.Duration(a.ApprovalTimeoutSeconds) * time.Second,
			TurnTimeout:     time.Duration(a.TurnTimeoutSeconds) * time.Second,
			MaxResultBytes:  a.MaxResultBytes,
			ProbeTimeout:    time.Duration(a.ProbeTimeoutSeconds) * time.Second,
			ModelsTimeout:   time.Duration(a.ModelsTimeoutSeconds) * time.Second,
			StartTimeout:    time.Duration(a.StartTimeoutSeconds) * time.Second,
		},
		Version: version.Version,
	})
	if err != nil {
		return fmt.Errorf("agents: %w", err)
	}
	d.Agents = eng
	return nil
}

// agentSandbox is the confinement of the agent runtimes hostlink can
// confine: the commands' sandbox, writable in every workdir whose
// agent_mode is workspace-write (the runtime adds its own state); nil when
// commands are configured unsandboxed.
func (d *Daemon) agentSandbox() *sandbox.Policy {
	p := d.sandboxPolicy()
	if p.Mode == sandbox.Off {
		return nil
	}
	modes := map[string]string{}
	for _, w := range d.Config.Workdirs {
		modes[w.Alias] = w.AgentMode
	}
	for _, wd := range d.Files.Workdirs() {
		if modes[wd.Alias] == agent.ModeWorkspaceWrite {
			p.Writable = append(p.Writable, wd.Root.Dir())
		}
	}
	return &p
}

// agentCapability says whether agent tasks are offered, and why not.
func (d *Daemon) agentCapability() apitype.CapabilityStatus {
	c := apitype.CapabilityStatus{Name: string(ops.Agents), Ready: d.Agents != nil}
	if !c.Ready {
		c.Reason = "disabled (enable locally with [agents] enabled = true and a workdir's agent_mode)"
	}
	return c
}

// agentTasks lists the agent tasks this process drives.
func (d *Daemon) agentTasks() []apitype.TaskStatus {
	if d.Agents == nil {
		return nil
	}
	var out []apitype.TaskStatus
	for _, t := range d.Agents.Running() {
		out = append(out, apitype.TaskStatus{ID: t.ID, Title: fmt.Sprintf("%s in %s (%s, %s)", t.Runtime, t.Workdir, t.Access, t.Status), Started: t.Created})
	}
	return out
}

// closeAgents stops the tasks this process drives (as cancelled, their
// runtime processes ended) and closes the engine.
func (d *Daemon) closeAgents() {
	if d.Agents != nil {
		d.Agents.Close()
	}
}
