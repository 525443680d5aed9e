package desktop

import (
	"context"

	"github.com/hostlink/hostlink/internal/desktop/native"
)

// Attach adds a desktop reached another way than this OS's native API (a
// companion's desktop, see internal/companion). It is listed under its own
// id, distinct from any native desktop, but its observations and input go
// through the queue named queue: the id of the physical desktop it
// reaches as that desktop's own backend names it ("x11::0",
// "win32:console"), so a native and a companion route to the same OS
// desktop serialize in one queue within this process. The native
// desktops are opened first, so attaching never hides them.
func (s *Service) Attach(ctx context.Context, b native.Backend, queue string) {
	s.open(ctx)
	s.mu.Lock()
	defer s.mu.Unlock()
	if old := s.desks[b.ID()]; old != nil {
		old.b.Close()
	}
	s.desks[b.ID()] = &desk{b: b, queue: queueFor(queue)}
}

// Detach removes an attached desktop. Its observation references fail
// from then on as for any desktop that is gone.
func (s *Service) Detach(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if d := s.desks[id]; d != nil {
		d.b.Close()
		delete(s.desks, id)
	}
}
