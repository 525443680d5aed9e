package approvals

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"github.com/hostlink/hostlink/internal/textsafe"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
)

// Digest returns the hex SHA-256 of v's canonical JSON (object keys sorted
// at every level, as encoding/json writes maps). It is what binds an
// approval to one exact action.
func Digest(v any) string {
	b, err := json.Marshal(v)
	if err == nil {
		var generic any
		if json.Unmarshal(b, &generic) == nil {
			b, err = json.Marshal(generic)
		}
	}
	if err != nil {
		// Everything a request decodes to marshals; never bind to nothing.
		panic("approvals: action is not JSON: " + err.Error())
	}
	sum := sha256.Sum256(b)
	return hex.EncodeToString(sum[:])
}

// Auditor is where a Broker records; audit.Log implements it.
type Auditor interface {
	Append(audit.Record) error
}

// Options configure a Broker.
type Options struct {
	// Timeout is how long a pending approval waits for a decision, and how
	// long a granted one stays usable.
	Timeout time.Duration
	// Wait bounds how long Require holds a caller before answering
	// APPROVAL_PENDING.
	Wait time.Duration
	// Audit records requests, decisions and expiries.
	Audit Auditor
	// Notify, if set, is told of each new pending approval (in its own
	// goroutine), e.g. to show a desktop notification.
	Notify func(Approval)
	// Keep is how many finished approvals are kept for display (default 200).
	Keep int
	// Now is the clock grants are judged by (default time.Now); tests
	// move it instead of sleeping.
	Now func() time.Time
}

// Broker holds approvals. It is safe for concurrent use.
type Broker struct {
	opts Options

	mu      sync.Mutex
	all     map[string]*entry // by id
	live    map[string]*entry // by action hash: pending, or decided and not yet reported to the caller
	order   []string          // ids, oldest first
	changed chan struct{}     // closed and replaced on every change

	grants  map[string]*Grant // by id
	gorder  []string          // grant ids, oldest first
	ended   []Grant           // the grants that ended most recently, oldest first
	resolve Resolver

	inPerson bool // [policy] confirm_in_person: see Proposal
}

type entry struct {
	a       Approval
	done    chan struct{} // closed when the approval stops being pending
	timer   *time.Timer
	waiters int // callers held in Require for it
	// ended: the client session that asked has ended, so no session
	// grant can be made from it.
	ended bool
}

// New returns a Broker.
func New(o Options) *Broker {
	if o.Keep <= 0 {
		o.Keep = 200
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return &Broker{opts: o, all: make(map[string]*entry), live: make(map[string]*entry), changed: make(chan struct{}),
		grants: make(map[string]*Grant)}
}

// SetTimes changes the timeout and wait for approvals made from now on (on
// a policy reload).
func (b *Broker) SetTimes(timeout, wait time.Duration) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.opts.Timeout, b.opts.Wait = timeout, wait
}

// Require returns nil when the user approved exactly this action (using the
// approval up), or a typed error: APPROVAL_PENDING while undecided after
// the wait, APPROVAL_DENIED or APPROVAL_EXPIRED. A cancelled ctx returns
// CANCELLED, and makes the approval abandoned when no other caller waits
// for it. The id of the approval is returned in every case.
func (b *Broker) Require(ctx context.Context, act Action) (string, error) {
	return b.RequireNotify(ctx, act, nil)
}

// RequireNotify is Require that, before it holds the caller, tells waiting
// which approval it waits for (to show the caller where to answer).
func (b *Broker) RequireNotify(ctx context.Context, act Action, waiting func(Approval)) (string, error) {
	b.mu.Lock()
	return b.require(ctx, act, b.opts.Wait, waiting)
}

// Check is Require without the wait: an undecided action answers
// APPROVAL_PENDING at once. It is for callers that hold locks.
func (b *Broker) Check(act Action) (string, error) {
	b.mu.Lock()
	return b.require(context.Background(), act, 0, nil)
}

// require is RequireNotify, entered with b.mu held.
func (b *Broker) require(ctx context.Context, act Action, wait time.Duration, waiting func(Approval)) (string, error) {
	now := time.Now()
	e := b.live[act.SHA256]
	if e != nil {
		b.expireLocked(e, now)
		if e.a.Action.StateSHA256 != act.StateSHA256 {
			undecided := e.a.State == Pending
			b.staleLocked(e, now)
			if undecided {
				// Nobody decided on what it showed: ask about what is
				// there now instead of failing the resend.
				e = nil
			}
		}
	}
	if e == nil {
		e = b.createLocked(act, now)
	}
	waited := wait <= 0
	for {
		switch e.a.State {
		case Approved:
			e.a.State = Used
			e.a.UsedAt = time.Now()
			delete(b.live, act.SHA256)
			b.changedLocked()
			b.mu.Unlock()
			return e.a.ID, nil
		case Denied:
			delete(b.live, act.SHA256)
			b.changedLocked()
			b.mu.Unlock()
			return e.a.ID, errcode.New(CodeDenied, "the user denied this action").With("approval_id", e.a.ID)
		case Expired:
			delete(b.live, act.SHA256)
			b.changedLocked()
			b.mu.Unlock()
			return e.a.ID, errcode.New(CodeExpired, "the approval expired before it was used or decided; send the request again to ask anew").With("approval_id", e.a.ID)
		case Stale:
			b.mu.Unlock()
			return e.a.ID, staleError(e.a.ID)
		case Used, Abandoned:
			// A concurrent identical call used the grant, or gave up:
			// this one needs its own.
			e = b.createLocked(act, now)
		}
		if waited {
			id, err := e.a.ID, pendingError(e.a)
			b.mu.Unlock()
			return id, err
		}
		left := min(wait, time.Until(e.a.Deadline))
		done, id := e.done, e.a.ID
		e.waiters++
		shown := e.a
		b.mu.Unlock()
		if waiting != nil {
			waiting(shown)
		}
		t := time.NewTimer(max(left, 0))
		select {
		case <-done:
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			b.mu.Lock()
			e.waiters--
			b.abandonLocked(e)
			b.mu.Unlock()
			return id, errcode.New(errcode.Cancelled, "the operation was cancelled while waiting for approval; the approval is abandoned unless another identical call waits for it").With("approval_id", id)
		}
		t.Stop()
		b.mu.Lock()
		e.waiters--
		now = time.Now()
		b.expireLocked(e, now)
		waited = true
	}
}

func pendingError(a Approval) *errcode.Error {
	return errcode.New(CodePending, "waiting for the user to approve this exact action on this computer (hostlink approvals, or the web console); it has not run. Send the identical request again to run it once approved").
		With("approval_id", a.ID).With("expires_at", a.Deadline.UTC().Format(time.RFC3339))
}

func (b *Broker) createLocked(act Action, now time.Time) *entry {
	id := newID("apr_")
	e := &entry{done: make(chan struct{}), a: Approval{ID: id, State: Pending, Action: act, Created: now, Deadline: now.Add(b.opts.Timeout)}}
	b.all[id] = e
	b.live[act.SHA256] = e
	b.order = append(b.order, id)
	b.trimLocked()
	e.timer = time.AfterFunc(b.opts.Timeout, func() { b.expire(id) })
	details := map[string]any{"approval_id": id, "op": act.Op, "class": act.Class, "summary": act.Summary,
		"action_sha256": act.SHA256, "deadline": e.a.Deadline.UTC().Format(time.RFC3339)}
	if act.Session != "" {
		details["session"] = audit.SessionRef(act.Session)
	}
	b.auditLocked(audit.Record{
		Transport: act.Transport, Peer: act.Peer, Op: "approval_requested", Workdir: act.Workdir, Code: "OK", Details: details,
	})
	b.changedLocked()
	if b.opts.Notify != nil {
		go b.opts.Notify(e.a)
	}
	return e
}

// trimLocked forgets the oldest finished approvals beyond Keep, and
// denials and expiries nobody came back for within a timeout.
func (b *Broker) trimLocked() {
	cutoff := time.Now().Add(-b.opts.Timeout)
	for h, e := range b.live {
		if (e.a.State == Denied || e.a.State == Expired) && e.a.Deadline.Before(cutoff) && e.a.Decided.Before(cutoff) {
			delete(b.live, h)
		}
	}
	for len(b.order) > b.opts.Keep {
		drop := -1
		for i, id := range b.order {
			if e := b.all[id]; e != nil && b.live[e.a.Action.SHA256] != e {
				drop = i
				break
			}
		}
		if drop < 0 {
			return
		}
		delete(b.all, b.order[drop])
		b.order = slices.Delete(b.order, drop, drop+1)
	}
}

func (b *Broker) expire(id string) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if e := b.all[id]; e != nil {
		b.expireLocked(e, time.Now())
	}
}

// expireLocked ends a pending or unused approved approval whose deadline
// has passed.
func (b *Broker) expireLocked(e *entry, now time.Time) {
	if (e.a.State != Pending && e.a.State != Approved) || now.Before(e.a.Deadline) {
		return
	}
	was := e.a.State
	e.a.State = Expired
	if was == Pending {
		close(e.done)
	}
	b.auditLocked(audit.Record{
		Transport: audit.Internal, Op: "approval_expired", Workdir: e.a.Action.Workdir, Code: string(CodeExpired),
		Details: map[string]any{"approval_id": e.a.ID, "op": e.a.Action.Op, "action_sha256": e.a.Action.SHA256, "was": string(was)},
	})
	b.changedLocked()
}

// staleLocked ends a pending or approved approval whose action's targets
// are no longer what it showed: what the user decides, or decided, on is
// not what would be done.
func (b *Broker) staleLocked(e *entry, now time.Time) {
	was := e.a.State
	if was != Pending && was != Approved {
		return
	}
	e.a.State = Stale
	e.timer.Stop()
	if was == Pending {
		e.a.Decided = now
		close(e.done)
	}
	if b.live[e.a.Action.SHA256] == e {
		delete(b.live, e.a.Action.SHA256)
	}
	b.auditLocked(audit.Record{
		Transport: e.a.Action.Transport, Peer: e.a.Action.Peer, Op: "approval_stale", Workdir: e.a.Action.Workdir, Code: string(errcode.Conflict),
		Details: map[string]any{"approval_id": e.a.ID, "op": e.a.Action.Op, "action_sha256": e.a.Action.SHA256, "was": string(was)},
	})
	b.changedLocked()
}

func staleError(id string) *errcode.Error {
	return errcode.New(errcode.Conflict, "what this action acts on changed since the approval showed it: it did not run, and the approval is ended. Send the request again to be asked about what is there now").
		With("approval_id", id)
}

// abandonLocked ends a pending approval nobody waits for any more, after
// its last waiting caller cancelled.
func (b *Broker) abandonLocked(e *entry) {
	if e.a.State != Pending || e.waiters > 0 {
		return
	}
	e.a.State = Abandoned
	e.a.Decided = time.Now()
	e.timer.Stop()
	close(e.done)
	if b.live[e.a.Action.SHA256] == e {
		delete(b.live, e.a.Action.SHA256)
	}
	b.auditLocked(audit.Record{
		Transport: e.a.Action.Transport, Peer: e.a.Action.Peer, Op: "approval_abandoned", Workdir: e.a.Action.Workdir, Code: string(errcode.Cancelled),
		Details: map[string]any{"approval_id": e.a.ID, "op": e.a.Action.Op, "action_sha256": e.a.Action.SHA256},
	})
	b.changedLocked()
}

// Decide approves or denies a pending approval, once. by names who decided
// (the control channel's measured peer, the console session) and via how
// ("ipc", "console", "notification"); both go to the audit log. DecideWith
// also grants a scope.
func (b *Broker) Decide(id string, approve bool, by string, via audit.Transport) (Approval, error) {
	return b.DecideWith(id, Decision{Approve: approve, By: by, Via: via})
}

// decideLocked is Decide for a decision whose scope was checked, with
// b.mu held; g, if set, is the grant the decision makes.
func (b *Broker) decideLocked(id string, d Decision, g *Grant) (Approval, error) {
	approve, by, via := d.Approve, d.By, d.Via
	e := b.all[id]
	if e == nil {
		return Approval{}, errcode.New(CodeNotFound, "no approval has id %q", textsafe.Clip(id, 64))
	}
	now := time.Now()
	b.expireLocked(e, now)
	if e.a.State != Pending {
		return e.a, errcode.New(CodeDecided, "approval %s is %s, not pending", id, e.a.State).With("state", string(e.a.State))
	}
	decision := "denied"
	e.a.State = Denied
	if approve {
		decision = "approved"
		e.a.State = Approved
		// The grant must be used within a timeout of the decision.
		e.a.Deadline = now.Add(b.opts.Timeout)
		e.timer.Reset(b.opts.Timeout)
	} else {
		e.timer.Stop()
	}
	e.a.Decided, e.a.DecidedBy, e.a.DecidedVia = now, by, via
	details := map[string]any{"approval_id": id, "decision": decision, "op": e.a.Action.Op,
		"summary": e.a.Action.Summary, "action_sha256": e.a.Action.SHA256, "requested_by": e.a.Action.Transport,
		"decided_at": now.UTC().Format(time.RFC3339Nano)}
	if approve {
		e.a.Scope = ScopeOnce
		if g != nil {
			e.a.Scope = g.Scope
			details["scope"] = string(g.Scope)
		}
	}
	if p := d.confirms; p != nil {
		details["proposal_id"], details["proposed_by"], details["proposed_via"] = p.ID, p.By, string(p.Via)
	}
	close(e.done)
	if g != nil {
		// The decision's record names the grant in force, so it comes
		// after the grant is.
		g = b.addGrantLocked(g, e.a)
		e.a.Grant = g.ID
		details["grant_id"] = g.ID
	}
	b.auditLocked(audit.Record{
		Transport: via, Peer: by, Op: "approval_decided", Workdir: e.a.Action.Workdir, Code: "OK", Details: details,
	})
	b.changedLocked()
	return e.a, nil
}

// Get returns one approval.
func (b *Broker) Get(id string) (Approval, bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.all[id]
	if e == nil {
		return Approval{}, false
	}
	b.expireLocked(e, time.Now())
	return e.a, true
}

// List returns the approvals, newest first; only the pending ones if
// pendingOnly.
func (b *Broker) List(pendingOnly bool) []Approval {
	b.mu.Lock()
	defer b.mu.Unlock()
	now := time.Now()
	out := []Approval{}
	for i := len(b.order) - 1; i >= 0; i-- {
		e := b.all[b.order[i]]
		if e == nil {
			continue
		}
		b.expireLocked(e, now)
		if pendingOnly && e.a.State != Pending {
			continue
		}
		out = append(out, e.a)
	}
	return out
}

// Changed returns a channel that is closed at the next change (a new
// approval, a decision, an expiry, a use).
func (b *Broker) Changed() <-chan struct{} {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.changed
}

func (b *Broker) changedLocked() {
	close(b.changed)
	b.changed = make(chan struct{})
}

func (b *Broker) auditLocked(r audit.Record) {
	if b.opts.Audit == nil {
		return
	}
	r.Time = time.Now()
	if err := b.opts.Audit.Append(r); err != nil {
		// The call that asked is refused by its own record's failure;
		// a decision or expiry stands, and says so here.
		slog.Warn("approval not recorded in the audit log", "op", r.Op, "err", err)
	}
}
