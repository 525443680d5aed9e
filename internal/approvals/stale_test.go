package approvals

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
)

// The identical request on another state than its approval showed ends
// the approval, pending or approved: on an approved one it gets CONFLICT
// (the user approved something else) and the next request asks anew; on a
// pending one, which nobody decided, it is asked about anew at once. A
// caller held for the ended approval is released with CONFLICT. The end
// is audited.
func TestStaleApproval(t *testing.T) {
	shown := func(state string) Action {
		a := action("x")
		a.StateSHA256 = Digest(state)
		return a
	}
	for _, approved := range []bool{false, true} {
		b, dir := newBroker(t, time.Minute, 0)
		id, err := b.Check(shown("one"))
		if errcode.CodeOf(err) != CodePending {
			t.Fatal(err)
		}
		if approved {
			if _, err := b.Decide(id, true, "tester", "test"); err != nil {
				t.Fatal(err)
			}
		}
		got, err := b.Check(shown("two"))
		switch {
		case approved && (got != id || errcode.CodeOf(err) != errcode.Conflict):
			t.Fatalf("approved, other state: %s %v, want CONFLICT for %s", got, err, id)
		case !approved && (got == id || errcode.CodeOf(err) != CodePending):
			t.Fatalf("pending, other state: %s %v, want a new pending approval", got, err)
		}
		if a, _ := b.Get(id); a.State != Stale {
			t.Fatalf("approval is %s, want stale", a.State)
		}
		if _, err := b.Decide(id, true, "tester", "test"); errcode.CodeOf(err) != CodeDecided {
			t.Fatalf("deciding a stale approval: %v", err)
		}
		// Back to the first state: the ended approval stays ended.
		again, err := b.Check(shown("one"))
		if again == id || errcode.CodeOf(err) != CodePending {
			t.Fatalf("after stale: %s %v, want a new pending approval", again, err)
		}
		lines, _ := audit.Tail(dir, 10)
		if !slices.ContainsFunc(lines, func(r audit.Line) bool { return r.Op == "approval_stale" && r.Code == string(errcode.Conflict) }) {
			t.Errorf("no approval_stale record in %+v", lines)
		}
	}

	// A caller held for the approval hears CONFLICT when another request
	// finds the state changed.
	b, _ := newBroker(t, time.Minute, time.Minute)
	held := make(chan error, 1)
	go func() { _, err := b.Require(context.Background(), shown("one")); held <- err }()
	for {
		changed := b.Changed()
		if len(b.List(true)) > 0 {
			break
		}
		<-changed
	}
	if _, err := b.Check(shown("two")); errcode.CodeOf(err) != CodePending {
		t.Fatalf("other state: %v, want it asked anew", err)
	}
	if err := <-held; errcode.CodeOf(err) != errcode.Conflict {
		t.Fatalf("held caller: %v, want CONFLICT", err)
	}
}
