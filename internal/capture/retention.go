package capture

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"time"
)

// acquire registers a read of capture id, which defers its removal until
// release. It reports false if Cleanup is removing the capture.
func (s *Store) acquire(id string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.removing[id] {
		return false
	}
	s.readers[id]++
	return true
}

func (s *Store) release(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.readers[id]--; s.readers[id] <= 0 {
		delete(s.readers, id)
	}
}

// Cleanup removes the captures whose retention has run out, except those
// still active or being read (a later Cleanup gets them), and capture
// directories without a database row (left by a crash mid-removal). It
// returns how many captures it removed.
func (s *Store) Cleanup() (removed int, err error) {
	rows, err := s.db.Query(`SELECT id FROM captures WHERE expires_at <= ? AND status NOT IN ('pending', 'running')`,
		s.now().UnixNano())
	if err != nil {
		return 0, err
	}
	var expired []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return 0, err
		}
		expired = append(expired, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return 0, err
	}

	// Claim the captures under s.mu, so that no read starts on one once
	// it is picked and none is picked while a read is in progress.
	s.mu.Lock()
	var claimed []string
	for _, id := range expired {
		if s.active[id] == nil && s.readers[id] == 0 {
			s.removing[id] = true
			claimed = append(claimed, id)
		}
	}
	s.mu.Unlock()
	defer func() {
		s.mu.Lock()
		for _, id := range claimed {
			delete(s.removing, id)
		}
		s.mu.Unlock()
	}()

	var errs []error
	for _, id := range claimed {
		if err := s.remove(id); err != nil {
			errs = append(errs, err)
			continue
		}
		removed++
	}
	errs = append(errs, s.removeOrphans())
	return removed, errors.Join(errs...)
}

// removeOrphans removes capture directories that have no row.
func (s *Store) removeOrphans() error {
	entries, err := os.ReadDir(s.dir)
	if err != nil {
		return err
	}
	var errs []error
	for _, e := range entries {
		id := e.Name()
		if !validID(id) {
			continue
		}
		var n int
		if err := s.db.QueryRow(`SELECT count(*) FROM captures WHERE id = ?`, id).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			continue
		}
		// Create inserts the row before making the directory, so a
		// directory without a row is never one being created.
		if err := os.RemoveAll(s.captureDir(id)); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// RunCleanup calls Cleanup every interval until ctx is done, logging
// failures (they are retried at the next tick).
func (s *Store) RunCleanup(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if _, err := s.Cleanup(); err != nil {
				slog.Warn("capture cleanup failed", "err", err)
			}
		}
	}
}
