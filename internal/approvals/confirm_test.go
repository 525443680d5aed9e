package approvals

import (
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
)

// Under confirm_in_person an approval from a channel a program of the
// user's can drive (the control channel, an MCP client's prompt) only
// proposes; the person confirms exactly the proposal shown, on a surface
// that needs them, or decides otherwise there. Denials never wait. Off
// (the default), the control channel decides as before.
func TestConfirmInPerson(t *testing.T) {
	b, dir := newBroker(t, time.Minute, 0)
	b.SetConfirmInPerson(true)
	act := write("a", "x")
	id := pendingFor(t, b, act)
	cli := Decision{Approve: true, By: "uid 1 pid 2", Via: audit.IPC}

	a, err := b.DecideWith(id, cli)
	if err != nil || a.State != Pending || a.Proposal == nil || a.Proposal.Scope != ScopeOnce || a.Proposal.Via != audit.IPC || a.Grant != "" {
		t.Fatalf("a control-channel approval: %+v %v", a, err)
	}
	first := a.Proposal.ID
	if _, err := b.Check(act); errcode.CodeOf(err) != CodePending {
		t.Fatalf("the action after a proposal: %v", err)
	}
	// An elicitation's answer is no person either.
	elicited := Decision{Approve: true, By: "claude (127.0.0.1:1)", Via: audit.MCPHTTP}
	if a, _ := b.DecideWith(id, elicited); a.State != Pending || a.Proposal.Via != audit.MCPHTTP {
		t.Fatalf("an MCP client's answer: %+v", a)
	}
	// A later proposal replaces the earlier; the earlier cannot be
	// confirmed any more.
	scoped := cli
	scoped.Scope, scoped.Minutes = ScopeClass, 1440
	a, _ = b.DecideWith(id, scoped)
	if a.Proposal.ID == first || a.Proposal.Scope != ScopeClass || a.Proposal.Covers == "" {
		t.Fatalf("the second proposal: %+v", a.Proposal)
	}
	second := a.Proposal.ID
	for _, p := range []string{first, "", "prp_nope"} {
		if _, err := b.Confirm(id, p, NotifiedBy, audit.Notification); errcode.CodeOf(err) != CodeProposalChanged {
			t.Errorf("confirming %q: %v", p, err)
		}
	}
	// A scope that does not fit is refused now, and leaves the proposal.
	bad := cli
	bad.Scope = ScopeCommand
	if _, err := b.DecideWith(id, bad); errcode.CodeOf(err) != CodeBadScope {
		t.Errorf("a proposal of a scope that does not fit: %v", err)
	}
	if a, _ := b.Get(id); a.State != Pending || a.Proposal.ID != second || len(b.Grants()) != 0 {
		t.Fatalf("before the confirmation: %+v, grants %v", a, b.Grants())
	}
	a, err = b.Confirm(id, second, "console session 1234 from 127.0.0.1:9", audit.Console)
	if err != nil || a.State != Approved || a.Scope != ScopeClass || a.Grant == "" || a.DecidedVia != audit.Console {
		t.Fatalf("confirmed: %+v %v", a, err)
	}
	if _, err := b.Confirm(id, second, NotifiedBy, audit.Notification); errcode.CodeOf(err) != CodeDecided {
		t.Errorf("confirming twice: %v", err)
	}
	var proposed, decided bool
	for _, r := range readAudit(t, dir) {
		switch {
		case r.Op == "approval_proposed" && r.Details["proposal_id"] == second && r.Peer == "uid 1 pid 2":
			proposed = true
		case r.Op == "approval_decided" && r.Details["proposal_id"] == second && r.Details["proposed_by"] == "uid 1 pid 2" && r.Transport == audit.Console:
			decided = true
		}
	}
	if !proposed || !decided {
		t.Errorf("audited: proposed %v, decided with the proposal %v", proposed, decided)
	}

	// A denial from the control channel decides at once; a person's
	// approval needs no proposal; a batch proposes each.
	deny := pendingFor(t, b, write("a", "deny"))
	if a, err := b.DecideWith(deny, Decision{By: "uid 1 pid 2", Via: audit.IPC}); err != nil || a.State != Denied {
		t.Errorf("a control-channel denial: %+v %v", a, err)
	}
	person := pendingFor(t, b, write("a", "person"))
	if a, err := b.DecideWith(person, Decision{Approve: true, Person: true, By: NotifiedBy, Via: audit.Notification}); err != nil || a.State != Approved {
		t.Errorf("a person's approval: %+v %v", a, err)
	}
	ids := []string{pendingFor(t, b, write("a", "b1")), pendingFor(t, b, write("a", "b2"))}
	for _, r := range b.DecideBatch(ids, cli) {
		if r.Error != nil || r.Approval.State != Pending || r.Approval.Proposal == nil {
			t.Errorf("a control-channel batch: %+v", r)
		}
	}

	// Off, the control channel decides.
	b.SetConfirmInPerson(false)
	if a, err := b.DecideWith(ids[0], cli); err != nil || a.State != Approved {
		t.Errorf("with confirm_in_person off: %+v %v", a, err)
	}
}
