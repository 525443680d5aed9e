package ops

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/policy"
)

// A budget admits PerMinute starts in a sliding minute and Concurrent
// running calls, only for the transports it binds, not for nested calls.
func TestBudget(t *testing.T) {
	b := &Budget{Name: "things", PerMinute: 5, Concurrent: 2, Transports: Remote}
	bs := NewBudgets()
	now := time.Unix(1000, 0)
	bs.now = func() time.Time { return now }
	r := New(Options{Audit: discard{}, Budgets: bs})
	hold := make(chan struct{})
	var started sync.WaitGroup
	Register(r, Spec{Name: "thing", Description: "d", Class: policy.Commands, Transports: AllTransports, Budget: b},
		func(_ context.Context, _ *Call, a struct {
			Wait bool `json:"wait,omitempty"`
		}) (echoResult, error) {
			if a.Wait {
				started.Done()
				<-hold
			}
			return echoResult{}, nil
		})
	link := Caller{Transport: audit.Link}
	call := func(c Caller, args string) error {
		_, err := r.Call(context.Background(), c, "thing", []byte(args), nil)
		return err
	}
	// Concurrent: two run, the third is refused while they do.
	started.Add(2)
	errs := make(chan error, 2)
	for range 2 {
		go func() { errs <- call(link, `{"wait":true}`) }()
	}
	started.Wait()
	if err := call(link, `{}`); errcode.CodeOf(err) != errcode.Overloaded || !Retryable(err) {
		t.Fatalf("third concurrent call: %v", err)
	}
	if err := call(Caller{Transport: audit.MCPStdio}, `{}`); err != nil {
		t.Fatalf("a transport the budget does not bind: %v", err)
	}
	if err := call(Caller{Transport: audit.Link, Nested: true}, `{}`); err != nil {
		t.Fatalf("a nested call: %v", err)
	}
	close(hold)
	for range 2 {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	// Per minute: 2 started so far (the refused one does not count); 3
	// more at the limit, the sixth past it, and a minute later again.
	for i := range 3 {
		if err := call(link, `{}`); err != nil {
			t.Fatalf("start %d: %v", i+3, err)
		}
	}
	err := call(link, `{}`)
	if e := errcode.As(err); e == nil || e.Code != errcode.Overloaded || e.Details["limit"] != "things_per_minute" {
		t.Fatalf("sixth start in a minute: %v", err)
	}
	now = now.Add(time.Minute)
	if err := call(link, `{}`); err != nil {
		t.Fatalf("a minute later: %v", err)
	}
}

type discard struct{}

func (discard) Check() error              { return nil }
func (discard) Append(audit.Record) error { return nil }
