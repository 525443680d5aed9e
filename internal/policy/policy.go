package policy

import (
	"context"
	"encoding/json"
	"maps"
	"path"
	"slices"
	"strings"
	"sync/atomic"
	"time"

	"github.com/hostlink/hostlink/internal/approvals"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
)

// CodeDenied: the local policy denies this operation (in this workdir).
const CodeDenied errcode.Code = "POLICY_DENIED"

// Mode is what the policy does with an action.
type Mode string

// Modes.
const (
	Deny  Mode = "deny"
	Ask   Mode = "ask"
	Allow Mode = "allow"
)

// Modes lists the valid modes, for configuration checks.
var Modes = []Mode{Deny, Ask, Allow}

// Classes: the policy keys, one per kind of action.
const (
	FilesRead  = "files_read"  // reading, listing, searching files
	FilesWrite = "files_write" // writing, editing, moving, deleting, creating
	Commands   = "commands"    // starting commands and feeding them input
	// CommandsUnsandboxed: a command asking for less than the sandbox
	// (network, or none); it also needs Commands.
	CommandsUnsandboxed = "commands_unsandboxed"
	Computer            = "computer"         // computer_act: input to the desktop
	ComputerObserve     = "computer_observe" // screenshots and window lists
	Agents              = "agents"           // submitting, steering and answering agent tasks
)

// Classes lists every class, in the order they are shown.
var Classes = []string{FilesRead, FilesWrite, Commands, CommandsUnsandboxed, Computer, ComputerObserve, Agents}

// Rules are the modes and allow rules for the default or one workdir.
type Rules struct {
	Modes map[string]Mode `json:"modes"` // class → mode; a workdir's missing class inherits the default
	// AllowCommands are exact command lines (as an approval shows them)
	// that run without asking where commands ask. A request that sets
	// environment variables always asks.
	AllowCommands []string `json:"allow_commands,omitempty"`
	// AllowPaths are globs of workdir-relative paths ('/'-separated, **
	// for any depth) that file operations may act on without asking.
	AllowPaths []string `json:"allow_paths,omitempty"`
}

// Config is the whole policy.
type Config struct {
	Default  Rules            `json:"default"`
	Workdirs map[string]Rules `json:"workdirs,omitempty"` // by alias
	Timeout  time.Duration    `json:"timeout"`            // a pending approval's life
	Wait     time.Duration    `json:"wait"`               // how long a call is held for a decision
	// PlatformFolders is the mode for a platform session's selected folder.
	PlatformFolders Mode `json:"platform_folders"`
}

// Defaults is the policy with nothing configured: reading files is
// allowed, everything else asks.
func Defaults() Config {
	return Config{
		Default: Rules{Modes: map[string]Mode{
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

// mode returns the mode of class in workdir (the default's when the
// workdir sets none, Ask when nothing does). CommandsUnsandboxed takes
// the stricter of its own mode and that of Commands.
func (c *Config) mode(class, workdir string) Mode {
	if class == CommandsUnsandboxed {
		return stricter(c.classMode(Commands, workdir), c.classMode(class, workdir))
	}
	return c.classMode(class, workdir)
}

func (c *Config) classMode(class, workdir string) Mode {
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

// Engine holds the policy in force and the approvals it asks for.
type Engine struct {
	cfg    atomic.Pointer[Config]
	broker *approvals.Broker
}

// New returns an Engine enforcing cfg, asking through b.
func New(cfg Config, b *approvals.Broker) *Engine {
	e := &Engine{broker: b}
	e.Set(cfg)
	return e
}

// Set replaces the policy (on reload). Calls already past the policy are
// not affected; approvals already pending keep their deadlines.
func (e *Engine) Set(cfg Config) {
	e.cfg.Store(&cfg)
	e.broker.SetTimes(cfg.Timeout, cfg.Wait)
}

// Config returns the policy in force.
func (e *Engine) Config() Config { return *e.cfg.Load() }

// Broker returns the approval broker.
func (e *Engine) Broker() *approvals.Broker { return e.broker }

// Hooks let the policy see what an action would touch, the way the
// operations themselves will.
type Hooks struct {
	// Locate resolves a workdir alias and a path: see files.Service.Locate.
	Locate func(alias, path string) (workdir, dir, rel string, err error)
	// ActTarget describes the window a computer_act would reach: see
	// desktop.Service.ActTarget. Nil when computer use is off.
	ActTarget func(transport, observationID string, x, y *int, windowRef string) string
}

// Gate returns the ops.Policy for one registry, whose file operations
// resolve through h.
func (e *Engine) Gate(h Hooks) ops.Policy { return &gate{e: e, h: h} }

type gate struct {
	e *Engine
	h Hooks
}

// Allow implements ops.Policy.
func (g *gate) Allow(ctx context.Context, c *ops.Call, op *ops.Op, in any) error {
	cfg := g.e.cfg.Load()
	class, asks := Classify(op)
	var args map[string]any
	if class == Commands && asks {
		args = argsOf(in)
		if Unsandboxed(args) != "" {
			class = CommandsUnsandboxed
		}
	}
	if len(cfg.Workdirs) == 0 {
		// No workdir overrides: allow and deny need no look at the request.
		switch m := cfg.mode(class, ""); {
		case m == Deny:
			return denied(c, op, class)
		case m == Allow || !asks:
			return nil
		}
	}
	if args == nil {
		args = argsOf(in)
	}
	act, err := g.describe(op, class, c, args)
	if err != nil {
		return err
	}
	mode := Allow
	for _, wd := range act.workdirs {
		mode = stricter(mode, cfg.mode(class, wd))
	}
	if len(act.workdirs) == 0 {
		mode = cfg.mode(class, "")
	}
	switch {
	case mode == Deny:
		return denied(c, op, class)
	case mode == Allow || !asks:
		return nil
	case g.allowedByRule(cfg, op.Name, act):
		c.Detail("policy", "allow_rule")
		return nil
	}
	a := act.Action
	a.Op, a.Class, a.Transport, a.Peer = op.Name, class, c.Transport, c.Peer
	bound := args
	if op.Name == "computer_act" {
		// An input is bound to its target window and coordinates, not to
		// the observation it names: a platform's INPUT_ACTION observes
		// afresh for every attempt, and a retry after the approval must
		// still match while the same window is under the same point.
		bound = maps.Clone(args)
		delete(bound, "observation_id")
		bound["target"] = act.target
	}
	binding := map[string]any{"op": op.Name, "transport": c.Transport, "dirs": act.dirs, "args": bound}
	if c.Transport == linkTransport {
		// A platform session's approval is its own.
		binding["peer"] = c.Peer
	}
	a.SHA256 = approvals.Digest(binding)
	id, err := g.e.broker.Require(ctx, a)
	c.Detail("policy", "ask")
	c.Detail("approval_id", id)
	return err
}

func argsOf(in any) map[string]any {
	var args map[string]any
	if b, err := json.Marshal(in); err == nil {
		json.Unmarshal(b, &args)
	}
	return args
}

// Unsandboxed returns what a command request lowers of the sandbox: its
// "sandbox" argument when that asks for less than the configuration
// ("network" or "off"), else "".
func Unsandboxed(args map[string]any) string {
	switch s := str(args, "sandbox"); s {
	case "", "default":
		return ""
	default:
		return s
	}
}

func denied(c *ops.Call, op *ops.Op, class string) error {
	c.Detail("policy", "deny")
	return errcode.New(CodeDenied, "the local policy denies %s here (%s = deny); only the user at this computer can change that", op.Name, class).
		With("class", class)
}

// linkTransport is the platform link's transport name (link.Transport),
// named here to keep the dependency one way.
const linkTransport = "link"

func stricter(a, b Mode) Mode {
	rank := map[Mode]int{Allow: 0, Ask: 1, Deny: 2}
	if rank[b] > rank[a] {
		return b
	}
	return a
}

// allowedByRule reports whether an allow rule covers the action.
func (g *gate) allowedByRule(cfg *Config, op string, act described) bool {
	if len(act.workdirs) == 0 || act.unsandboxed {
		return false
	}
	for _, wd := range act.workdirs {
		cmds, globs := cfg.allowLists(wd)
		switch {
		case act.commandLine != "":
			if act.hasEnv || !slices.Contains(cmds, act.commandLine) {
				return false
			}
		case len(act.rels) > 0:
			for _, rel := range act.rels {
				if !slices.ContainsFunc(globs, func(g string) bool { return MatchGlob(g, rel) }) {
					return false
				}
			}
		default:
			return false
		}
	}
	return true
}

// MatchGlob matches a '/'-separated relative path against a glob in which
// ** matches any number of whole components and *, ? and [...] match as in
// path.Match within one component.
func MatchGlob(glob, rel string) bool {
	return matchComps(strings.Split(glob, "/"), strings.Split(rel, "/"))
}

func matchComps(g, p []string) bool {
	for len(g) > 0 {
		if g[0] == "**" {
			for i := 0; i <= len(p); i++ {
				if matchComps(g[1:], p[i:]) {
					return true
				}
			}
			return false
		}
		if len(p) == 0 {
			return false
		}
		if ok, err := path.Match(g[0], p[0]); err != nil || !ok {
			return false
		}
		g, p = g[1:], p[1:]
	}
	return len(p) == 0
}

// ValidGlob reports whether glob is well formed.
func ValidGlob(glob string) bool {
	for _, c := range strings.Split(glob, "/") {
		if c == "**" {
			continue
		}
		if _, err := path.Match(c, ""); err != nil {
			return false
		}
	}
	return glob != ""
}
