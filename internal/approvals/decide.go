package approvals

import (
	"crypto/rand"
	"encoding/hex"
	"github.com/hostlink/hostlink/internal/textsafe"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
)

// CodeBadScope: the scope does not fit the approval (a command scope for
// a file write, a path outside the workdir, an argv prefix that is not
// one), or its parameters are out of range.
const CodeBadScope errcode.Code = "APPROVAL_BAD_SCOPE"

// Decision is the user's answer to one approval.
type Decision struct {
	Approve bool
	// Scope is how far an approval reaches; "" is ScopeOnce. Denials are
	// always once.
	Scope Scope
	// Minutes is a ScopeClass grant's window, 1 to MaxGrantMinutes.
	Minutes int
	// Path is a ScopePath grant's directory, workdir-relative; "" is the
	// directory holding the action's (first) target. It is resolved
	// through the jail, must hold every target of the action below it
	// (not be one), and cannot be the workdir's root.
	Path string
	// ArgvPrefix is a ScopeArgvPrefix grant's prefix, which the user may
	// shorten from the action's argv; nil is the whole argv.
	ArgvPrefix []string
	// By and Via say who decided and how: the control channel's measured
	// peer (uid/pid), a console session, a notification action, an MCP
	// client answering an elicitation.
	By  string
	Via audit.Transport
	// Person: the decision was taken on a surface that needs a person at
	// the desktop (the console, a notification's button), not on one a
	// program of the user's can drive (the control channel, an MCP
	// client's prompt). Under confirm_in_person only such a decision
	// approves; any other approval becomes a Proposal. Denials never wait.
	Person bool
	// confirms is the proposal a Confirm decides as.
	confirms *Proposal
}

// Resolver resolves a workdir-relative path the way the operations do,
// returning it with every link resolved (files.Service.Locate). It is how
// a ScopePath grant's directory is placed.
type Resolver func(workdir, path string) (real string, err error)

// SetResolver sets how ScopePath directories are resolved; without one,
// only the directory holding the action's target can be granted.
func (b *Broker) SetResolver(r Resolver) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.resolve = r
}

// DecideWith decides a pending approval; approving with a scope other
// than once also makes the Grant (listed by Grants, its id in the
// returned Approval's Grant).
func (b *Broker) DecideWith(id string, d Decision) (Approval, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.decideWithLocked(id, d)
}

func (b *Broker) decideWithLocked(id string, d Decision) (Approval, error) {
	if d.Approve && b.inPerson && !d.Person {
		return b.proposeLocked(id, d)
	}
	e := b.all[id]
	if e == nil {
		return Approval{}, errcode.New(CodeNotFound, "no approval has id %q", textsafe.Clip(id, 64))
	}
	var g *Grant
	if d.Approve && d.Scope != "" && d.Scope != ScopeOnce {
		var err error
		if d.Scope == ScopeSession && e.ended {
			return e.a, errcode.New(CodeBadScope, "the client session that asked has ended, so scope session would cover nothing")
		}
		if g, err = b.grantFor(e.a.Action, d); err != nil {
			return e.a, err
		}
	}
	return b.decideLocked(id, d, g)
}

// DecideBatch applies one decision to each of ids ("approve these 3"), in
// order; each gets its own outcome, and one that fails leaves the others
// decided.
func (b *Broker) DecideBatch(ids []string, d Decision) []BatchResult {
	b.mu.Lock()
	defer b.mu.Unlock()
	out := make([]BatchResult, 0, len(ids))
	for _, id := range ids {
		a, err := b.decideWithLocked(id, d)
		r := BatchResult{ID: id, Approval: a}
		if err != nil {
			r.Error = errcode.As(err)
		}
		out = append(out, r)
	}
	return out
}

// grantFor builds the grant d asks for act, or says why it does not fit.
func (b *Broker) grantFor(act Action, d Decision) (*Grant, error) {
	now := b.opts.Now()
	g := &Grant{ID: newID("grt_"), Scope: d.Scope, Class: act.Class, Created: now, GrantedBy: d.By, GrantedVia: string(d.Via)}
	bad := func(format string, args ...any) error { return errcode.New(CodeBadScope, format, args...) }
	if len(act.Targets) > 0 {
		g.Workdir, g.WorkdirPath = act.Targets[0].Workdir, act.Targets[0].WorkdirPath
		for _, t := range act.Targets[1:] {
			if t.WorkdirPath != g.WorkdirPath && d.Scope != ScopeSession {
				return nil, bad("the action acts in more than one workdir; only once or session can cover it")
			}
		}
	}
	needWorkdir := func() error {
		if g.WorkdirPath == "" {
			return bad("the action acts in no workdir, so scope %s cannot cover it", d.Scope)
		}
		return nil
	}
	switch d.Scope {
	case ScopeSession:
		if act.Session == "" {
			return nil, bad("the caller has no session the daemon can tell apart, so scope session cannot cover it")
		}
		g.Session, g.Client = act.Session, string(act.Transport)+" "+act.Peer
		g.Workdir, g.WorkdirPath = "", ""
	case ScopeClass:
		if err := needWorkdir(); err != nil {
			return nil, err
		}
		if d.Minutes < 1 || d.Minutes > MaxGrantMinutes {
			return nil, bad("scope class needs minutes between 1 and %d, not %d", MaxGrantMinutes, d.Minutes)
		}
		g.Expires = now.Add(time.Duration(d.Minutes) * time.Minute)
	case ScopePath:
		if err := needWorkdir(); err != nil {
			return nil, err
		}
		if act.Class != "files_write" {
			return nil, bad("scope path covers writes (files_write), not %s", act.Class)
		}
		prefix, err := b.pathPrefix(act, d.Path)
		if err != nil {
			return nil, err
		}
		g.PathPrefix = prefix
		if !covers(g, act, now) {
			return nil, bad("the directory %q (resolved) does not hold everything this action writes below it (a path grant never covers the directory itself)", prefix)
		}
	case ScopeCommand:
		if err := needWorkdir(); err != nil {
			return nil, err
		}
		if act.CommandLine == "" || act.HasEnv {
			return nil, bad("scope command covers a command without environment variables; this action is not one")
		}
		g.CommandLine = act.CommandLine
	case ScopeArgvPrefix:
		if err := needWorkdir(); err != nil {
			return nil, err
		}
		if len(act.Argv) == 0 || act.HasEnv {
			return nil, bad("scope argv_prefix covers an argv command without environment variables; this action is not one")
		}
		p := d.ArgvPrefix
		if p == nil {
			p = act.Argv
		}
		if len(p) == 0 || len(p) > len(act.Argv) || !slices.Equal(act.Argv[:len(p)], p) {
			return nil, bad("argv_prefix must be a non-empty prefix of the action's argv %q", act.Argv)
		}
		g.ArgvPrefix = slices.Clone(p)
	default:
		return nil, bad("unknown scope %q (want one of %v)", d.Scope, Scopes)
	}
	describeGrant(g)
	return g, nil
}

// pathPrefix resolves a ScopePath directory: the one named, through the
// resolver, or the directory of the action's first target. The workdir's
// root is refused: writes anywhere in it are the class scope, which ends
// after a window, not a path.
func (b *Broker) pathPrefix(act Action, p string) (string, error) {
	var dir string
	if p == "" {
		t := act.Targets[0]
		if t.Real == "" {
			return "", errcode.New(CodeBadScope, "%s could not be resolved, so no directory can be granted for it", t.Rel)
		}
		dir = path.Dir(t.Real)
	} else {
		if b.resolve == nil {
			return "", errcode.New(CodeBadScope, "this daemon cannot resolve %q; grant the target's own directory instead", p)
		}
		real, err := b.resolve(act.Targets[0].Workdir, p)
		if err != nil {
			return "", errcode.New(CodeBadScope, "the directory %q cannot be granted: %v", p, err)
		}
		dir = strings.TrimSuffix(real, "/")
	}
	if dir == "." || dir == "" {
		return "", errcode.New(CodeBadScope, "that directory is the workdir itself: writes anywhere in it are scope class, for a number of minutes, not a path")
	}
	return dir, nil
}

// sameCover reports whether two grants cover the same actions, whatever
// their windows.
func sameCover(a, b *Grant) bool {
	return a.Scope == b.Scope && a.Class == b.Class && a.Session == b.Session && a.WorkdirPath == b.WorkdirPath &&
		a.PathPrefix == b.PathPrefix && a.CommandLine == b.CommandLine && slices.Equal(a.ArgvPrefix, b.ArgvPrefix)
}

// addGrantLocked puts g in force, or, when a grant in force covers the
// same (approving a batch with one scope), keeps that one, with the later
// end of the two; it returns the grant in force.
func (b *Broker) addGrantLocked(g *Grant, a Approval) *Grant {
	for _, id := range b.gorder {
		old := b.grants[id]
		if !sameCover(old, g) {
			continue
		}
		if !old.Expires.IsZero() && (g.Expires.IsZero() || g.Expires.After(old.Expires)) {
			old.Expires = g.Expires
			describeGrant(old)
			b.auditLocked(audit.Record{Transport: audit.Transport(g.GrantedVia), Peer: g.GrantedBy, Op: "grant_extended", Workdir: old.Workdir, Code: "OK",
				Details: grantDetails(old)})
		}
		return old
	}
	g.Approval = a.ID
	b.grants[g.ID] = g
	b.gorder = append(b.gorder, g.ID)
	b.auditLocked(audit.Record{
		Transport: audit.Transport(g.GrantedVia), Peer: g.GrantedBy, Op: "grant_created", Workdir: g.Workdir, Code: "OK",
		Details: grantDetails(g),
	})
	return g
}

func grantDetails(g *Grant) map[string]any {
	d := map[string]any{"grant_id": g.ID, "scope": string(g.Scope), "covers": g.Covers, "ends": g.Ends, "class": g.Class, "approval_id": g.Approval}
	if g.Session != "" {
		d["session"] = audit.SessionRef(g.Session)
	}
	if !g.Expires.IsZero() {
		d["expires"] = g.Expires.UTC().Format(time.RFC3339)
	}
	return d
}

// Covered returns the grant that lets act run without asking, counting
// the use and auditing it; ok is false when none does (the policy then
// asks). The policy calls it only where the mode is ask.
func (b *Broker) Covered(act Action) (Grant, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e := b.live[act.SHA256]; e != nil && e.a.State == Approved {
		// The call the decision answered uses its own approval.
		return Grant{}, false
	}
	now := b.opts.Now()
	b.dropEndedLocked(now)
	for _, id := range b.gorder {
		g := b.grants[id]
		if !covers(g, act, now) {
			continue
		}
		g.Uses++
		b.auditLocked(audit.Record{
			Transport: act.Transport, Peer: act.Peer, Op: "grant_used", Workdir: act.Workdir, Code: "OK",
			Details: map[string]any{"grant_id": g.ID, "scope": string(g.Scope), "op": act.Op, "summary": act.Summary,
				"action_sha256": act.SHA256, "uses": g.Uses},
		})
		b.changedLocked()
		return *g, true
	}
	return Grant{}, false
}

// dropEndedLocked forgets grants whose window has passed, auditing the
// end.
func (b *Broker) dropEndedLocked(now time.Time) {
	b.gorder = slices.DeleteFunc(b.gorder, func(id string) bool {
		g := b.grants[id]
		if g.Expires.IsZero() || now.Before(g.Expires) {
			return false
		}
		delete(b.grants, id)
		b.keepEndedLocked(g, g.Expires, "its time ran out")
		b.auditLocked(audit.Record{Transport: audit.Internal, Op: "grant_expired", Workdir: g.Workdir, Code: "OK", Details: grantDetails(g)})
		b.changedLocked()
		return true
	})
}

// keepEnded is how many ended grants are kept to be shown as ended.
const keepEnded = 50

// keepEndedLocked keeps g, ended at when for why, to be shown as ended.
func (b *Broker) keepEndedLocked(g *Grant, when time.Time, why string) {
	e := *g
	e.ArgvPrefix = slices.Clone(g.ArgvPrefix)
	e.Ended, e.EndedWhy = when, why
	b.ended = append(b.ended, e)
	if len(b.ended) > keepEnded {
		b.ended = slices.Delete(b.ended, 0, len(b.ended)-keepEnded)
	}
}

// EndedGrants returns the grants that ended most recently (at most
// keepEnded), newest first: what a user who saw a grant in force finds
// it became.
func (b *Broker) EndedGrants() []Grant {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.dropEndedLocked(b.opts.Now())
	out := slices.Clone(b.ended)
	slices.Reverse(out)
	return out
}

// Grants returns the grants in force, oldest first.
func (b *Broker) Grants() []Grant {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.dropEndedLocked(b.opts.Now())
	out := make([]Grant, 0, len(b.gorder))
	for _, id := range b.gorder {
		g := *b.grants[id]
		g.ArgvPrefix = slices.Clone(g.ArgvPrefix)
		out = append(out, g)
	}
	return out
}

// Grant returns one grant in force.
func (b *Broker) Grant(id string) (Grant, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.dropEndedLocked(b.opts.Now())
	g := b.grants[id]
	if g == nil {
		return Grant{}, false
	}
	return *g, true
}

// CodeGrantNotFound: no grant in force has that id.
const CodeGrantNotFound errcode.Code = "GRANT_NOT_FOUND"

// Revoke ends a grant now; by and via say who did, as for Decide.
func (b *Broker) Revoke(id, by string, via audit.Transport) (Grant, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.dropEndedLocked(b.opts.Now())
	g := b.grants[id]
	if g == nil {
		return Grant{}, errcode.New(CodeGrantNotFound, "no grant in force has id %q", textsafe.Clip(id, 64))
	}
	b.endLocked(g, "grant_revoked", by, via, "revoked by "+by+" via "+string(via))
	return *g, nil
}

// EndSession ends the grants of a client session that closed.
func (b *Broker) EndSession(session string) {
	if session == "" {
		return
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	for _, id := range slices.Clone(b.gorder) {
		if g := b.grants[id]; g.Session == session {
			b.endLocked(g, "grant_ended", "", audit.Internal, "its client session ended")
		}
	}
	for _, e := range b.all {
		if e.a.Action.Session == session && !e.ended {
			e.ended, e.a.SessionEnded = true, true
			b.changedLocked()
		}
	}
}

func (b *Broker) endLocked(g *Grant, op, by string, via audit.Transport, why string) {
	b.keepEndedLocked(g, b.opts.Now(), why)
	delete(b.grants, g.ID)
	b.gorder = slices.DeleteFunc(b.gorder, func(id string) bool { return id == g.ID })
	b.auditLocked(audit.Record{Transport: via, Peer: by, Op: op, Workdir: g.Workdir, Code: "OK", Details: grantDetails(g)})
	b.changedLocked()
}

// MarkSaved records that a grant was written to the configuration.
func (b *Broker) MarkSaved(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if g := b.grants[id]; g != nil {
		g.Saved = true
		describeGrant(g)
		b.changedLocked()
	}
}

// Image returns the marked observation PNG of approval id's computer_act.
func (b *Broker) Image(id string) ([]byte, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.all[id]
	if e == nil || len(e.a.Action.PNG) == 0 {
		return nil, false
	}
	return e.a.Action.PNG, true
}

func newID(prefix string) string {
	var raw [9]byte
	rand.Read(raw[:])
	return prefix + hex.EncodeToString(raw[:])
}
