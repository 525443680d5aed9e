package policy

import (
	"slices"
	"time"
)

// Rules are the modes and allow rules for the default or one workdir.
type Rules struct {
	Modes map[Class]Mode `json:"modes"` // class → mode; a workdir's missing class inherits the default
	// AllowCommands are exact command lines (as an approval shows them)
	// that run without asking where commands ask. A request that sets
	// environment variables always asks.
	AllowCommands []string `json:"allow_commands,omitempty"`
	// AllowPaths are globs (package glob) of workdir-relative paths that
	// file operations may act on without asking. Both the path as written
	// and the path it resolves to must match.
	AllowPaths []string `json:"allow_paths,omitempty"`
}

// Config is the whole policy.
type Config struct {
	Default  Rules            `json:"default"`
	Workdirs map[string]Rules `json:"workdirs,omitempty"` // by alias
	Timeout  time.Duration    `json:"timeout"`            // a pending approval's life
	Wait     time.Duration    `json:"wait"`               // how long a call is held for a decision
	// PlatformFolders is the mode for a platform session's folder.
	PlatformFolders Mode `json:"platform_folders"`
	// ApproveInClient puts approvals to the asking MCP client's own
	// prompt (elicitation) when the client supports it, besides the
	// local user's channels.
	ApproveInClient bool `json:"approve_in_client,omitempty"`
	// ConfirmInPerson: an approval taken where a program of the user's
	// could take it (the control channel) is only proposed until the
	// person confirms it (approvals.Proposal).
	ConfirmInPerson bool `json:"confirm_in_person,omitempty"`
}

// Defaults is the policy with nothing configured: reading files and
// looking at the screen are allowed, everything else asks.
func Defaults() Config {
	return Config{
		Default: Rules{Modes: map[Class]Mode{
			FilesRead: Allow, FilesWrite: Ask, Commands: Ask, CommandsUnsandboxed: Ask, Computer: Ask, ComputerObserve: Allow, Agents: Ask,
		}},
		Timeout:         5 * time.Minute,
		Wait:            20 * time.Second,
		PlatformFolders: Ask,
	}
}

// AllowAll is the policy that allows every action (what a registry without
// a policy does), for tests and benchmarks that measure the operations.
func AllowAll() Config {
	c := Defaults()
	for _, k := range Classes {
		c.Default.Modes[k] = Allow
	}
	c.PlatformFolders = Allow
	return c
}

// Mode returns the mode of class in workdir ("" for none): the workdir's
// own, else the default's, else ask. The fixed classes have their own;
// CommandsUnsandboxed takes the stricter of its own and that of Commands.
func (c *Config) Mode(class Class, workdir string) Mode {
	switch class {
	case Hostlink:
		return Allow
	case PlatformFolders:
		if c.PlatformFolders == "" {
			return Ask
		}
		return c.PlatformFolders
	case CommandsUnsandboxed:
		return stricter(c.classMode(Commands, workdir), c.classMode(class, workdir))
	}
	return c.classMode(class, workdir)
}

func (c *Config) classMode(class Class, workdir string) Mode {
	if r, ok := c.Workdirs[workdir]; ok && workdir != "" {
		if m, ok := r.Modes[class]; ok && m != "" {
			return m
		}
	}
	if m, ok := c.Default.Modes[class]; ok && m != "" {
		return m
	}
	return Ask
}

// allowLists returns the allow rules in force in workdir: the default's
// and the workdir's own.
func (c *Config) allowLists(workdir string) (cmds, globs []string) {
	cmds, globs = c.Default.AllowCommands, c.Default.AllowPaths
	if r, ok := c.Workdirs[workdir]; ok && workdir != "" {
		cmds = append(slices.Clip(cmds), r.AllowCommands...)
		globs = append(slices.Clip(globs), r.AllowPaths...)
	}
	return cmds, globs
}

// allowsAll reports whether every class is allowed everywhere: then no
// request needs describing to be judged.
func (c *Config) allowsAll() bool {
	if len(c.Workdirs) > 0 || c.Mode(PlatformFolders, "") != Allow {
		return false
	}
	for _, k := range Classes {
		if c.Mode(k, "") != Allow {
			return false
		}
	}
	return true
}
