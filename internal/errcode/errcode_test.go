package errcode

import (
	"context"
	"errors"
	"fmt"
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
