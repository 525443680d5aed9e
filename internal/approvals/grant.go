package approvals

import (
	"fmt"
	"slices"
	"strings"
	"time"
)

// Scopes lists the valid scopes, in the order a user is offered them.
var Scopes = []Scope{ScopeOnce, ScopeSession, ScopeClass, ScopePath, ScopeCommand, ScopeArgvPrefix}

// MaxGrantMinutes bounds a ScopeClass window (a day).
const MaxGrantMinutes = 24 * 60

// covers reports whether g lets act run at now.
func covers(g *Grant, act Action, now time.Time) bool {
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

// describeGrant fills in g's Covers and Ends.
func describeGrant(g *Grant) {
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
