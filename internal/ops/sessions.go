package ops

import (
	"sync"

	"github.com/hostlink/hostlink/internal/audit"
)

// Sessions are the client sessions open now (see Caller.Session), as
// their transports report them: a control-channel connection or a stdio
// MCP session from its start to its end, an HTTP MCP session from its
// first call until the client deletes it, it idles out or the daemon
// stops. The console marks them connected.
type Sessions struct {
	mu   sync.Mutex
	open map[string]int // by audit.SessionRef
}

// NewSessions returns an empty set.
func NewSessions() *Sessions { return &Sessions{open: map[string]int{}} }

// Begin records that the session with key started.
func (s *Sessions) Begin(key string) {
	if key == "" {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.open[audit.SessionRef(key)]++
}

// End records that the session with key ended.
func (s *Sessions) End(key string) {
	if key == "" {
		return
	}
	ref := audit.SessionRef(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.open[ref]--; s.open[ref] <= 0 {
		delete(s.open, ref)
	}
}

// Open reports whether the session the audit log names ref is open.
func (s *Sessions) Open(ref string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.open[ref] > 0
}
