package approvals

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
)

func newBroker(t *testing.T, timeout, wait time.Duration) (*Broker, string) {
	t.Helper()
	dir := filepath.Join(t.TempDir(), "audit")
	log, err := audit.Open(audit.Options{Dir: dir, Key: make([]byte, 32), MaxBytes: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { log.Close() })
	return New(Options{Timeout: timeout, Wait: wait, Audit: log}), dir
}

func action(arg string) Action {
	return Action{Op: "run_command", Class: "commands", Transport: "test", Summary: "run " + arg,
		SHA256: Digest(map[string]any{"op": "run_command", "args": map[string]any{"command": arg}})}
}

// decideWhenPending decides the next pending approval as soon as it shows.
func decideWhenPending(t *testing.T, b *Broker, approve bool) chan Approval {
	ch := make(chan Approval, 1)
	go func() {
		for {
			changed := b.Changed()
			if p := b.List(true); len(p) > 0 {
				a, err := b.Decide(p[0].ID, approve, "tester", "test")
				if err != nil {
					t.Error(err)
				}
				ch <- a
				return
			}
			<-changed
		}
	}()
	return ch
}

func TestRequireOutcomes(t *testing.T) {
	tests := []struct {
		name    string
		decide  *bool // nil: nobody decides
		timeout time.Duration
		want    errcode.Code
	}{
		{"approved during the wait", ptr(true), time.Minute, ""},
		{"denied during the wait", ptr(false), time.Minute, CodeDenied},
		{"expired", nil, 50 * time.Millisecond, CodeExpired},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, dir := newBroker(t, tt.timeout, 10*time.Second)
			if tt.decide != nil {
				decideWhenPending(t, b, *tt.decide)
			}
			_, err := b.Require(context.Background(), action("x"))
			if errcode.CodeOf(err) != tt.want {
				t.Fatalf("Require = %v, want %q", err, tt.want)
			}
			lines, _ := audit.Tail(dir, 10)
			if len(lines) < 2 || lines[0].Op != "approval_requested" {
				t.Fatalf("audit %+v", lines)
			}
		})
	}
}

// TestPendingThenRetry: an undecided call answers APPROVAL_PENDING; the
// identical request, sent again after the user approved, runs once; a
// third identical request needs a new approval.
func TestPendingThenRetry(t *testing.T) {
	b, dir := newBroker(t, time.Minute, 20*time.Millisecond)
	id, err := b.Require(context.Background(), action("x"))
	e, _ := err.(*errcode.Error)
	if e == nil || e.Code != CodePending || e.Details["approval_id"] != id || e.Details["expires_at"] == nil {
		t.Fatalf("first call: %v", err)
	}
	if _, err := b.Decide(id, true, "uid=1000", "ipc"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Decide(id, false, "uid=1000", "ipc"); errcode.CodeOf(err) != CodeDecided {
		t.Fatalf("second decision: %v", err)
	}
	if id2, err := b.Require(context.Background(), action("x")); err != nil || id2 != id {
		t.Fatalf("retry after approval: %s %v", id2, err)
	}
	if a, _ := b.Get(id); a.State != Used || a.DecidedBy != "uid=1000" || a.DecidedVia != "ipc" {
		t.Fatalf("approval after use: %+v", a)
	}
	id3, err := b.Require(context.Background(), action("x"))
	if errcode.CodeOf(err) != CodePending || id3 == id {
		t.Fatalf("third call reused the grant: %s %v", id3, err)
	}
	lines, _ := audit.Tail(dir, 10)
	var decided int
	for _, l := range lines {
		if l.Op == "approval_decided" {
			decided++
			if l.Peer != "uid=1000" || l.Transport != "ipc" || l.Details["decision"] != "approved" {
				t.Errorf("decision record %+v", l)
			}
		}
	}
	if decided != 1 {
		t.Fatalf("%d decision records", decided)
	}
}

// TestChangedRequest: approving one action does not approve another that
// differs in any argument.
func TestChangedRequest(t *testing.T) {
	b, _ := newBroker(t, time.Minute, 20*time.Millisecond)
	id, _ := b.Require(context.Background(), action("echo a"))
	b.Decide(id, true, "u", "test")
	id2, err := b.Require(context.Background(), action("echo b"))
	if errcode.CodeOf(err) != CodePending || id2 == id {
		t.Fatalf("changed request: %s %v", id2, err)
	}
	if _, err := b.Require(context.Background(), action("echo a")); err != nil {
		t.Fatalf("the approved action: %v", err)
	}
}

// TestGrantExpires: an approval not used before its deadline expires.
func TestGrantExpires(t *testing.T) {
	b, _ := newBroker(t, 50*time.Millisecond, 5*time.Millisecond)
	id, _ := b.Require(context.Background(), action("x"))
	if _, err := b.Decide(id, true, "u", "test"); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if _, err := b.Require(context.Background(), action("x")); errcode.CodeOf(err) != CodeExpired {
		t.Fatalf("late use: %v", err)
	}
	if _, err := b.Decide(id, true, "u", "test"); errcode.CodeOf(err) != CodeDecided {
		t.Fatalf("deciding an expired approval: %v", err)
	}
	if _, err := b.Decide("apr_nope", true, "u", "test"); errcode.CodeOf(err) != CodeNotFound {
		t.Fatalf("unknown id: %v", err)
	}
}

func TestDigestCanonical(t *testing.T) {
	a := Digest(map[string]any{"b": 1, "a": []any{"x", map[string]any{"d": 1, "c": 2}}})
	type s struct {
		A []any `json:"a"`
		B int   `json:"b"`
	}
	if b := Digest(s{A: []any{"x", map[string]any{"c": 2, "d": 1}}, B: 1}); a != b {
		t.Fatalf("same value, different digests %s %s", a, b)
	}
	if Digest(map[string]any{"a": "x"}) == Digest(map[string]any{"a": "y"}) {
		t.Fatal("different values, same digest")
	}
}

func ptr[T any](v T) *T { return &v }
