package config

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/hostlink/hostlink/internal/glob"
)

// Policy is the local approval policy (package policy): for each class of
// action, "deny", "ask" (the user approves each exact action) or "allow",
// with optional allow rules. It is read from this file only; no remote
// request can read or change it.
type Policy struct {
	PolicyRules
	ApprovalTimeoutSeconds int    `toml:"approval_timeout_seconds"` // a pending approval expires after it
	WaitSeconds            int    `toml:"wait_seconds"`             // a call is held this long for a decision
	Notifications          string `toml:"notifications"`            // "desktop" or "off"
	// PlatformFolders is what happens when a platform session selects a
	// folder to work in: "ask" (approve each folder once), "allow", "deny".
	PlatformFolders string `toml:"platform_folders"`
	// ApproveInClient lets an MCP client that supports elicitation put
	// each approval to its own prompt (the client application decides:
	// the user's explicit delegation); off by default.
	ApproveInClient bool `toml:"approve_in_client"`
	// ConfirmInPerson makes an approval taken on the control channel
	// (`hostlink approvals approve`, which any program of the user's can
	// run) a proposal that the person confirms on the desktop
	// notification's button or in the console; off by default. It
	// excludes ApproveInClient.
	ConfirmInPerson bool `toml:"confirm_in_person"`
	// Workdirs override the rules per workdir alias; a class left out
	// inherits the rule above, and allow rules add to those above.
	Workdirs map[string]PolicyRules `toml:"workdirs"`
}

// PolicyRules are the modes and allow rules of the policy or of one
// workdir.
type PolicyRules struct {
	FilesRead  string `toml:"files_read"`
	FilesWrite string `toml:"files_write"`
	Commands   string `toml:"commands"`
	// CommandsUnsandboxed is a command request that asks for less than
	// the sandbox (the network, or no sandbox at all).
	CommandsUnsandboxed string   `toml:"commands_unsandboxed"`
	Computer            string   `toml:"computer"`
	ComputerObserve     string   `toml:"computer_observe"`
	Agents              string   `toml:"agents"`
	AllowCommands       []string `toml:"allow_commands"` // exact command lines that run without asking
	AllowPaths          []string `toml:"allow_paths"`    // workdir-relative globs file operations may act on without asking
}

// PolicyModes are the values a policy class takes.
var PolicyModes = []string{"deny", "ask", "allow"}

// Modes returns the classes set in r, by policy class name.
func (r PolicyRules) Modes() map[string]string {
	m := map[string]string{}
	for k, v := range map[string]string{
		"files_read": r.FilesRead, "files_write": r.FilesWrite, "commands": r.Commands,
		"commands_unsandboxed": r.CommandsUnsandboxed,
		"computer":             r.Computer, "computer_observe": r.ComputerObserve, "agents": r.Agents,
	} {
		if v != "" {
			m[k] = v
		}
	}
	return m
}

func defaultPolicy() Policy {
	return Policy{
		PolicyRules: PolicyRules{FilesRead: "allow", FilesWrite: "ask", Commands: "ask",
			CommandsUnsandboxed: "ask", Computer: "ask", ComputerObserve: "allow", Agents: "ask"},
		ApprovalTimeoutSeconds: 300,
		WaitSeconds:            20,
		Notifications:          "desktop",
		PlatformFolders:        "ask",
	}
}

func (c *Config) fillPolicyDefaults() {
	d := defaultPolicy()
	p := &c.Policy
	setIfZero(&p.FilesRead, d.FilesRead)
	setIfZero(&p.FilesWrite, d.FilesWrite)
	setIfZero(&p.Commands, d.Commands)
	setIfZero(&p.CommandsUnsandboxed, d.CommandsUnsandboxed)
	setIfZero(&p.Computer, d.Computer)
	setIfZero(&p.ComputerObserve, d.ComputerObserve)
	setIfZero(&p.Agents, d.Agents)
	setIfZero(&p.ApprovalTimeoutSeconds, d.ApprovalTimeoutSeconds)
	setIfZero(&p.WaitSeconds, d.WaitSeconds)
	setIfZero(&p.Notifications, d.Notifications)
	setIfZero(&p.PlatformFolders, d.PlatformFolders)
}

func (c *Config) policyProblems() []problem {
	var probs []problem
	check := func(key string, r PolicyRules) {
		modes := r.Modes()
		names := make([]string, 0, len(modes))
		for k := range modes {
			names = append(names, k)
		}
		sort.Strings(names)
		for _, k := range names {
			if !slices.Contains(PolicyModes, modes[k]) {
				probs = append(probs, keyProblem(key+k, "%q is not one of %q", modes[k], PolicyModes))
			}
		}
		for i, cmd := range r.AllowCommands {
			if strings.TrimSpace(cmd) == "" {
				probs = append(probs, keyProblem(fmt.Sprintf("%sallow_commands[%d]", key, i), "empty command"))
			}
		}
		for i, g := range r.AllowPaths {
			if err := glob.Check(g); err != nil {
				probs = append(probs, keyProblem(fmt.Sprintf("%sallow_paths[%d]", key, i), "%q is not a valid glob: %v", g, err))
			}
		}
	}
	check("policy.", c.Policy.PolicyRules)
	aliases := []string{"workspace"}
	for _, w := range c.Workdirs {
		aliases = append(aliases, w.Alias)
	}
	for alias, r := range c.Policy.Workdirs {
		key := "policy.workdirs." + alias
		if !slices.Contains(aliases, alias) {
			probs = append(probs, keyProblem(key, "no workdir has alias %q", alias))
		}
		check(key+".", r)
	}
	if m := c.Policy.PlatformFolders; !slices.Contains(PolicyModes, m) {
		probs = append(probs, keyProblem("policy.platform_folders", "%q is not one of %q", m, PolicyModes))
	}
	if c.Policy.ConfirmInPerson && c.Policy.ApproveInClient {
		probs = append(probs, keyProblem("policy.approve_in_client", "true lets an MCP client's prompt decide, which confirm_in_person = true forbids: set one of them to false"))
	}
	if n := c.Policy.Notifications; n != "desktop" && n != "off" {
		probs = append(probs, keyProblem("policy.notifications", "%q is not one of \"desktop\", \"off\"", n))
	}
	for _, b := range []bound{
		{"policy.approval_timeout_seconds", int64(c.Policy.ApprovalTimeoutSeconds), 1, 24 * 3600},
		{"policy.wait_seconds", int64(c.Policy.WaitSeconds), 1, 300},
	} {
		if b.value < b.min || b.value > b.max {
			probs = append(probs, keyProblem(b.key, "%d is out of range: must be %d to %d", b.value, b.min, b.max))
		}
	}
	return probs
}
