package desktop

import (
	"context"
	"testing"

	"github.com/hostlink/hostlink/internal/desktop/native"
)

type idOnly struct {
	native.Backend
	id string
}

func (b idOnly) ID() string   { return b.id }
func (b idOnly) Close() error { return nil }

// TestAttachSharesQueue: an attached desktop is listed under its own id
// beside the native one, and shares the queue of the physical desktop it
// names.
func TestAttachSharesQueue(t *testing.T) {
	s := New(Options{Open: func(context.Context) ([]native.Backend, native.Readiness) {
		return []native.Backend{idOnly{id: "x11::77"}}, native.Readiness{Ready: true}
	}})
	s.Attach(context.Background(), idOnly{id: "companion:c/x11::77"}, "x11::77")
	ds, _ := s.open(context.Background())
	if len(ds) != 2 {
		t.Fatalf("%d desktops, want the native and the attached one", len(ds))
	}
	if s.desks["companion:c/x11::77"].queue != s.desks["x11::77"].queue {
		t.Fatal("two routes to one physical desktop have separate queues")
	}
	s.Detach("companion:c/x11::77")
	if ds, _ := s.open(context.Background()); len(ds) != 1 {
		t.Fatalf("%d desktops after Detach", len(ds))
	}
}
