package approvals

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Scope is how far a decision reaches beyond the one action it answers.
type Scope string

// Scopes. Once is the default: the approval covers its one exact action.
// Every other scope makes a Grant, which lets later actions it covers run
// without asking until it ends or is revoked. A grant is only consulted
// where the policy says ask: no grant ever lets through what deny refuses.
const (
	ScopeOnce Scope = "once"
	// ScopeSession: this class of action from this client session (the
	// MCP session or control-channel connection, as the daemon measured
	// it), in any workdir, until the session ends.
	ScopeSession Scope = "session"
	// ScopeClass: this class of action in this workdir, from any client,
	// for Decision.Minutes.
	ScopeClass Scope = "class"
	// ScopePath: writes (files_write) below a directory of this workdir,
	// as written and as resolved: never through a link leading out of it,
	// and never to the directory itself or anything above it (deleting or
	// moving the directory is not a write below it). The workdir's root
	// cannot be granted so: that is ScopeClass, with its window.
	ScopePath Scope = "path"
	// ScopeCommand: this exact command line, without environment
	// variables, in this workdir.
	ScopeCommand Scope = "command"
	// ScopeArgvPrefix: argv commands whose argv starts with
	// Decision.ArgvPrefix (which the user may shorten from the action's
	// argv), without environment variables, in this workdir.
	ScopeArgvPrefix Scope = "argv_prefix"
)

// Scopes lists the valid scopes, in the order a user is offered them.
var Scopes = []Scope{ScopeOnce, ScopeSession, ScopeClass, ScopePath, ScopeCommand, ScopeArgvPrefix}

// MaxGrantMinutes bounds a ScopeClass window (a day).
const MaxGrantMinutes = 24 * 60

// Grant lets the actions it covers run without asking. Grants are held in
// memory only and end with the daemon, unless saved to the configuration
// (then the configuration's allow rule, not the grant, lets them through
// after a restart).
type Grant struct {
	ID    string `json:"id"` // "grt_…"
	Scope Scope  `json:"scope"`
	// Covers says in words what the grant lets run, e.g. "files_write in
	// workdir proj (/home/u/proj) from any client for 10 minutes".
	Covers string `json:"covers"`
	// Session and Client: for ScopeSession, the session key the grant is
	// bound to and who that session is (transport and measured peer).
	Session string `json:"session,omitempty"`
	Client  string `json:"client,omitempty"`
	// Workdir (alias) and WorkdirPath (canonical directory); empty for
	// ScopeSession, which covers every workdir.
	Workdir     string `json:"workdir,omitempty"`
	WorkdirPath string `json:"workdir_path,omitempty"`
	Class       string `json:"class"`
	// PathPrefix (ScopePath): the workdir-relative directory, resolved,
	// '/'-separated; never "." (the whole workdir is ScopeClass).
	PathPrefix string `json:"path_prefix,omitempty"`
	// CommandLine (ScopeCommand) or ArgvPrefix (ScopeArgvPrefix).
	CommandLine string    `json:"command_line,omitempty"`
	ArgvPrefix  []string  `json:"argv_prefix,omitempty"`
	Created     time.Time `json:"created"`
	// Expires is when the grant ends; zero: when the session ends
	// (ScopeSession) or the daemon stops.
	Expires time.Time `json:"expires,omitzero"`
	// Ends says when it ends, in words.
	Ends string `json:"ends"`
	Uses int    `json:"uses"` // actions it has let run
	// Saved: written to the configuration (see Daemon.SaveGrant).
	Saved bool `json:"saved"`
	// Approval is the approval whose decision made the grant; GrantedBy
	// and GrantedVia who decided it.
	Approval   string `json:"approval"`
	GrantedBy  string `json:"granted_by"`
	GrantedVia string `json:"granted_via"`
	// Ended is when a grant no longer in force ended, and EndedWhy why:
	// its session ended, it was revoked, its window passed.
	Ended    time.Time `json:"ended,omitzero"`
	EndedWhy string    `json:"ended_why,omitempty"`
}

// covers reports whether g lets act run at now.
func (g *Grant) covers(act Action, now time.Time) bool {
	if !g.Expires.IsZero() && !now.Before(g.Expires) {
		return false
	}
	if act.Class != g.Class {
		return false
	}
	switch g.Scope {
	case ScopeSession:
		return act.Session != "" && act.Session == g.Session
	case ScopeClass:
		return len(act.Targets) > 0 && allTargets(act, func(t Target) bool { return t.WorkdirPath == g.WorkdirPath })
	case ScopePath:
		return len(act.Targets) > 0 && allTargets(act, func(t Target) bool {
			return t.WorkdirPath == g.WorkdirPath && t.Real != "" && below(t.Rel, g.PathPrefix) && below(t.Real, g.PathPrefix)
		})
	case ScopeCommand:
		return !act.HasEnv && act.CommandLine != "" && act.CommandLine == g.CommandLine && sameWorkdir(act, g)
	case ScopeArgvPrefix:
		return !act.HasEnv && len(g.ArgvPrefix) > 0 && len(act.Argv) >= len(g.ArgvPrefix) &&
			slices.Equal(act.Argv[:len(g.ArgvPrefix)], g.ArgvPrefix) && sameWorkdir(act, g)
	}
	return false
}

func allTargets(act Action, f func(Target) bool) bool {
	for _, t := range act.Targets {
		if !f(t) {
			return false
		}
	}
	return true
}

func sameWorkdir(act Action, g *Grant) bool {
	return len(act.Targets) > 0 && allTargets(act, func(t Target) bool { return t.WorkdirPath == g.WorkdirPath })
}

// below reports whether the '/'-separated relative path p is inside dir:
// never dir itself, so that a grant for writes below a directory does not
// let it be deleted, moved or replaced; and never anything when dir is the
// workdir's root (such a grant is refused when made).
func below(p, dir string) bool {
	if dir == "." || dir == "" {
		return false
	}
	return strings.HasPrefix(p, dir+"/")
}

// describe fills in Covers and Ends.
func (g *Grant) describe() {
	where := fmt.Sprintf("workdir %s (%s)", g.Workdir, g.WorkdirPath)
	switch g.Scope {
	case ScopeSession:
		g.Covers = fmt.Sprintf("%s actions from the client session %s, in any workdir", g.Class, g.Client)
	case ScopeClass:
		g.Covers = fmt.Sprintf("%s actions in %s, from any client", g.Class, where)
	case ScopePath:
		g.Covers = fmt.Sprintf("writes below %s/ in %s (not %s itself; as resolved, never through a link out), from any client", g.PathPrefix, where, g.PathPrefix)
	case ScopeCommand:
		g.Covers = fmt.Sprintf("the exact command line %q (%s, no environment variables) in %s, from any client", g.CommandLine, g.Class, where)
	case ScopeArgvPrefix:
		g.Covers = fmt.Sprintf("commands whose argv starts with %q (%s, no environment variables) in %s, from any client", g.ArgvPrefix, g.Class, where)
	}
	switch {
	case !g.Expires.IsZero():
		g.Ends = "at " + g.Expires.UTC().Format(time.RFC3339) + ", or when the daemon stops"
	case g.Scope == ScopeSession:
		g.Ends = "when the session ends, or the daemon stops"
	default:
		g.Ends = "when the daemon stops"
	}
	if g.Saved {
		g.Ends += "; saved to the configuration, which keeps allowing it after that"
	}
}
