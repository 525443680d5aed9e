package console

import "time"

// ExpireLogins ends every login link not used yet, as the clock passing
// LoginTTL would.
func ExpireLogins(s *Server) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := range s.logins {
		s.logins[i].expires = time.Now().Add(-time.Nanosecond)
	}
}
