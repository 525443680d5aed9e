package capture

import "sync"

// Pin protects capture id from removal by Cleanup until the returned
// release is called, as an open read does for the length of one chunk:
// the companion's output transfer holds a pin from open to close (or until
// its connection drops). Retention is not changed: once released, an
// expired capture goes at the next Cleanup. release may be called more
// than once; only the first call counts.
func (s *Store) Pin(id string) (release func(), err error) {
	if !validID(id) {
		return nil, notFound(id)
	}
	if !s.acquire(id) {
		return nil, notFound(id)
	}
	if _, err := s.load(id); err != nil {
		s.release(id)
		return nil, err
	}
	var once sync.Once
	return func() { once.Do(func() { s.release(id) }) }, nil
}
