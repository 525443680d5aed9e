package errcode

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestAs(t *testing.T) {
	typed := New(PathNotFound, "%q missing", "a")
	tests := []struct {
		err  error
		code Code
		msg  string
	}{
		{typed, PathNotFound, `"a" missing`},
		{fmt.Errorf("wrapped: %w", typed), PathNotFound, `"a" missing`},
		{errors.New("open /etc/shadow: permission denied"), Internal, "internal error"},
		{context.Canceled, Cancelled, "the operation was cancelled"},
		{fmt.Errorf("x: %w", context.DeadlineExceeded), Cancelled, "the operation was cancelled"},
	}
	for _, tt := range tests {
		got := As(tt.err)
		if got.Code != tt.code || got.Message != tt.msg {
			t.Errorf("As(%v) = %v, want %s %q", tt.err, got, tt.code, tt.msg)
		}
	}
	if As(nil) != nil || CodeOf(nil) != "" {
		t.Error("nil must stay nil")
	}
}

// TestAsKeepsCause: an untyped error becomes INTERNAL_ERROR that still
// unwraps to it, while neither its text nor its JSON carries the cause.
func TestAsKeepsCause(t *testing.T) {
	cause := fmt.Errorf("open /home/ada/.ssh/id: %w", os.ErrPermission)
	e := As(cause)
	if !errors.Is(e, os.ErrPermission) || e.Unwrap() != cause {
		t.Fatalf("As lost the cause: %v", e.Unwrap())
	}
	if c := As(fmt.Errorf("x: %w", context.Canceled)); !errors.Is(c, context.Canceled) {
		t.Fatal("a cancellation lost its cause")
	}
	b, _ := json.Marshal(e.With("k", 1))
	if strings.Contains(string(b), ".ssh") || strings.Contains(e.Error(), ".ssh") {
		t.Fatalf("the cause leaks: %s / %s", b, e)
	}
	if e.With("k", 1).Unwrap() != cause {
		t.Fatal("With dropped the cause")
	}
}

func TestWithCopies(t *testing.T) {
	a := New(Conflict, "x")
	b := a.With("k", 1)
	if a.Details != nil || b.Details["k"] != 1 {
		t.Fatalf("With changed the original: %v %v", a.Details, b.Details)
	}
	c := b.With("j", 2)
	if len(b.Details) != 1 || len(c.Details) != 2 {
		t.Fatalf("With shares details: %v %v", b.Details, c.Details)
	}
}

func TestWireCodes(t *testing.T) {
	if len(Wire) != 29 {
		t.Errorf("%d wire codes, want the protocol's 29", len(Wire))
	}
	seen := map[Code]bool{}
	for _, c := range Wire {
		if seen[c] {
			t.Errorf("%s listed twice", c)
		}
		seen[c] = true
	}
}
