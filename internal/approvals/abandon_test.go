package approvals

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/errcode"
)

// TestCancelledCallerAbandons: a caller that cancels while held makes its
// approval abandoned, which cannot be approved; a resend asks anew; an
// approval another caller still waits for stays pending.
func TestCancelledCallerAbandons(t *testing.T) {
	b, _ := newBroker(t, time.Hour, time.Hour)
	ctx, cancel := context.WithCancel(context.Background())
	shown := make(chan Approval, 1)
	errc := make(chan error, 1)
	go func() {
		_, err := b.RequireNotify(ctx, action("x"), func(a Approval) { shown <- a })
		errc <- err
	}()
	a := <-shown
	if a.State != Pending {
		t.Fatalf("waiting is told of a %s approval", a.State)
	}
	cancel()
	if err := <-errc; errcode.CodeOf(err) != errcode.Cancelled {
		t.Fatalf("cancelled caller got %v", err)
	}
	got, _ := b.Get(a.ID)
	if got.State != Abandoned || got.Decided.IsZero() {
		t.Fatalf("after the cancel the approval is %+v", got)
	}
	if _, err := b.Decide(a.ID, true, "tester", "test"); errcode.CodeOf(err) != CodeDecided {
		t.Fatalf("approving an abandoned approval: %v", err)
	}
	if id, err := b.Check(action("x")); errcode.CodeOf(err) != CodePending || id == a.ID {
		t.Fatalf("a resend got %s %v, want a new pending approval", id, err)
	}
}

func TestAbandonWaitsForTheLastCaller(t *testing.T) {
	b, _ := newBroker(t, time.Hour, time.Hour)
	first, cancelFirst := context.WithCancel(context.Background())
	defer cancelFirst()
	second, cancelSecond := context.WithCancel(context.Background())
	defer cancelSecond()
	var held sync.WaitGroup
	held.Add(2)
	errs := make(chan error, 2)
	for _, ctx := range []context.Context{first, second} {
		go func() {
			_, err := b.RequireNotify(ctx, action("y"), func(Approval) { held.Done() })
			errs <- err
		}()
	}
	held.Wait()
	cancelFirst()
	if err := <-errs; errcode.CodeOf(err) != errcode.Cancelled {
		t.Fatalf("first caller got %v", err)
	}
	p := b.List(true)
	if len(p) != 1 {
		t.Fatalf("with one caller still waiting, pending = %+v", p)
	}
	if _, err := b.Decide(p[0].ID, true, "tester", "test"); err != nil {
		t.Fatal(err)
	}
	if err := <-errs; err != nil {
		t.Fatalf("the caller still waiting got %v after the approval", err)
	}
}
