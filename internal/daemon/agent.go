package daemon

import (
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/hostlink/hostlink/internal/agent"
	"github.com/hostlink/hostlink/internal/agent/fakeruntime"
	agentruntimes "github.com/hostlink/hostlink/internal/agent/runtimes"
	"github.com/hostlink/hostlink/internal/sandbox"
	"github.com/hostlink/hostlink/internal/version"
)

// FakeRuntimeEnv names the program of the fake agent runtime. It is for
// tests only: with it unset (always, outside tests) the runtime "fake" has
// no adapter and cannot run, whatever the configuration says.
const FakeRuntimeEnv = "HOSTLINK_TEST_FAKE_RUNTIME"

// AgentsDir is the agent engine's private state directory.
func AgentsDir(state string) string { return filepath.Join(state, "agents") }

// openAgents opens the agent engine when the local user enabled agents and
// some workdir allows them: it reconciles tasks a previous hostlink left
// unfinished, guards hostlink's own file mutations with the workdir writer
// leases, and registers the agent operations. Otherwise nothing is
// registered, so no transport offers them.
func (d *Daemon) openAgents() error {
	cfg := d.Config
	if !cfg.AgentsOn() {
		return nil
	}
	// Runtime adapters are created at first use, so an absent or broken
	// runtime never stops the others or hostlink.
	runtimes := agentruntimes.Factories(agentruntimes.Paths{Codex: cfg.Agents.CodexPath, Claude: cfg.Agents.ClaudePath, Qoder: cfg.Agents.QoderPath,
		Sandbox: d.agentSandbox()})
	if prog := os.Getenv(FakeRuntimeEnv); prog != "" {
		runtimes[fakeruntime.Name] = func() (agent.Runtime, error) {
			return &fakeruntime.Runtime{Argv: []string{prog}}, nil
		}
	}
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
		},
		Version: version.Version,
	})
	if err != nil {
		return fmt.Errorf("agents: %w", err)
	}
	d.Agents = eng
	d.Files.SetGuard(eng.Leases())
	agent.Register(d.Registry, eng)
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
func (d *Daemon) agentCapability() CapabilityStatus {
	c := CapabilityStatus{Name: "agents", Ready: d.Agents != nil}
	if !c.Ready {
		c.Reason = "disabled (enable locally with [agents] enabled = true and a workdir's agent_mode)"
	}
	return c
}

// agentTasks lists the agent tasks this process drives.
func (d *Daemon) agentTasks() []TaskStatus {
	if d.Agents == nil {
		return nil
	}
	var out []TaskStatus
	for _, t := range d.Agents.Running() {
		out = append(out, TaskStatus{ID: t.ID, Title: fmt.Sprintf("%s in %s (%s, %s)", t.Runtime, t.Workdir, t.Access, t.Status), Started: t.Created})
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
