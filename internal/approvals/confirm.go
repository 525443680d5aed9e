package approvals

import (
	"github.com/hostlink/hostlink/internal/textsafe"
	"slices"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
)

// CodePersonRequired: under confirm_in_person, what was asked widens what
// agents may do and is done only where the person decides (the console):
// saving a grant to the configuration from the control channel.
const CodePersonRequired errcode.Code = "PERSON_REQUIRED"

// CodeProposalChanged: the decision a confirmation names is no longer the
// one proposed (another proposal replaced it, or there is none); nothing
// was decided.
const CodeProposalChanged errcode.Code = "APPROVAL_PROPOSAL_CHANGED"

// SetConfirmInPerson turns [policy] confirm_in_person on or off (at start
// and on a reload): while it is on, an approval decided without
// Decision.Person becomes a Proposal instead.
func (b *Broker) SetConfirmInPerson(on bool) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.inPerson = on
}

// ConfirmInPerson reports whether decisions need a person's confirmation.
func (b *Broker) ConfirmInPerson() bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.inPerson
}

// proposeLocked records d as approval id's proposal, replacing any
// earlier one, after checking that its scope fits (a scope that does not
// is refused now, not at the confirmation).
func (b *Broker) proposeLocked(id string, d Decision) (Approval, error) {
	e := b.all[id]
	if e == nil {
		return Approval{}, errcode.New(CodeNotFound, "no approval has id %q", textsafe.Clip(id, 64))
	}
	b.expireLocked(e, time.Now())
	if e.a.State != Pending {
		return e.a, errcode.New(CodeDecided, "approval %s is %s, not pending", id, e.a.State).With("state", string(e.a.State))
	}
	p := &Proposal{ID: newID("prp_"), Scope: d.Scope, Minutes: d.Minutes, Path: d.Path, ArgvPrefix: slices.Clone(d.ArgvPrefix),
		Covers: "this exact action, once", By: d.By, Via: d.Via, At: time.Now()}
	if p.Scope == "" {
		p.Scope = ScopeOnce
	}
	if p.Scope != ScopeOnce {
		if p.Scope == ScopeSession && e.ended {
			return e.a, errcode.New(CodeBadScope, "the client session that asked has ended, so scope session would cover nothing")
		}
		g, err := b.grantFor(e.a.Action, d)
		if err != nil {
			return e.a, err
		}
		p.Covers = g.Covers
	}
	e.a.Proposal = p
	b.auditLocked(audit.Record{Transport: d.Via, Peer: d.By, Op: "approval_proposed", Workdir: e.a.Action.Workdir, Code: "OK",
		Details: map[string]any{"approval_id": id, "proposal_id": p.ID, "scope": string(p.Scope), "covers": p.Covers,
			"op": e.a.Action.Op, "summary": e.a.Action.Summary, "action_sha256": e.a.Action.SHA256}})
	b.changedLocked()
	return e.a, nil
}

// Confirm decides approval id as its proposal proposal said, as the
// person on a surface that needs them (by and via say which, as for
// Decide). It fails with CodeProposalChanged, deciding nothing, when the
// approval's proposal is not that one any more: the person confirms what
// they were shown, never a proposal that replaced it meanwhile.
func (b *Broker) Confirm(id, proposal, by string, via audit.Transport) (Approval, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	e := b.all[id]
	if e == nil {
		return Approval{}, errcode.New(CodeNotFound, "no approval has id %q", textsafe.Clip(id, 64))
	}
	p := e.a.Proposal
	if e.a.State == Pending && (p == nil || p.ID != proposal) {
		return e.a, errcode.New(CodeProposalChanged, "the decision proposed for approval %s is no longer the one shown; look at it again", id)
	}
	d := Decision{Approve: true, Person: true, By: by, Via: via, confirms: p}
	if p != nil {
		d.Scope, d.Minutes, d.Path, d.ArgvPrefix = p.Scope, p.Minutes, p.Path, p.ArgvPrefix
		if d.Scope == ScopeOnce {
			d.Scope = ""
		}
	}
	return b.decideWithLocked(id, d)
}
