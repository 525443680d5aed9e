package capture

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/tstest"
)

func exists(t *testing.T, s *Store, id string) bool {
	t.Helper()
	_, err := s.Get(id)
	if errcode.CodeOf(err) == CodeNotFound {
		if _, err := os.Stat(s.captureDir(id)); !errors.Is(err, os.ErrNotExist) {
			t.Errorf("capture %s has no row but its directory remains (%v)", id, err)
		}
		return false
	}
	if err != nil {
		t.Fatal(err)
	}
	return true
}

func TestCleanup(t *testing.T) {
	clock := newFakeClock()
	s := openStore(t, Options{Retention: time.Hour, Now: clock.Now})
	finished := create(t, s, Meta{})
	write(t, finished, Stdout, []byte("old"))
	finish(t, finished, exited(0))
	running := create(t, s, Meta{})
	if err := running.Started(1, clock.Now()); err != nil {
		t.Fatal(err)
	}
	beingRead := create(t, s, Meta{})
	finish(t, beingRead, exited(0))
	clock.Advance(30 * time.Minute)
	young := create(t, s, Meta{})
	finish(t, young, exited(0))

	// Reads do not renew retention.
	before, _ := s.Get(finished.ID())
	if _, err := s.Read(finished.ID(), Stdout, 0, 10); err != nil {
		t.Fatal(err)
	}
	if after, _ := s.Get(finished.ID()); !after.ExpiresAt.Equal(before.ExpiresAt) {
		t.Errorf("a read moved the expiry from %v to %v", before.ExpiresAt, after.ExpiresAt)
	}

	if n, err := s.Cleanup(); n != 0 || err != nil {
		t.Fatalf("Cleanup before expiry = %d, %v", n, err)
	}
	clock.Advance(31 * time.Minute) // past the first three's expiry, not young's
	if !s.acquire(beingRead.ID()) {
		t.Fatal("acquire failed")
	}
	if n, err := s.Cleanup(); n != 1 || err != nil {
		t.Errorf("Cleanup = %d, %v; want only the finished capture removed", n, err)
	}
	for _, tt := range []struct {
		name string
		c    *Capture
		want bool
	}{
		{"expired", finished, false},
		{"running", running, true},
		{"being read", beingRead, true},
		{"not expired", young, true},
	} {
		if got := exists(t, s, tt.c.ID()); got != tt.want {
			t.Errorf("%s capture exists = %v, want %v", tt.name, got, tt.want)
		}
	}
	if _, err := s.Read(finished.ID(), Stdout, 0, 10); errcode.CodeOf(err) != CodeNotFound {
		t.Errorf("Read of a removed capture = %v", err)
	}

	// Once the read is over and the command ended, a later cleanup takes them.
	s.release(beingRead.ID())
	finish(t, running, exited(0))
	if n, err := s.Cleanup(); n != 2 || err != nil {
		t.Errorf("second Cleanup = %d, %v; want 2", n, err)
	}
	if !exists(t, s, young.ID()) {
		t.Error("young capture removed")
	}

	// A directory without a row (crash mid-removal) is swept.
	orphan := s.captureDir(newID())
	if err := os.MkdirAll(orphan, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(orphan, Stdout), []byte("x"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Cleanup(); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(orphan); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("orphan directory kept: %v", err)
	}
}

func TestRetentionFixedAtCreation(t *testing.T) {
	clock := newFakeClock()
	dir := filepath.Join(t.TempDir(), "captures")
	s := openStore(t, Options{Dir: dir, Retention: time.Hour, Now: clock.Now})
	short := create(t, s, Meta{})
	finish(t, short, exited(0))
	s.Close()

	// The configured retention changes; the existing capture keeps its own.
	s = openStore(t, Options{Dir: dir, Retention: 48 * time.Hour, Now: clock.Now})
	long := create(t, s, Meta{})
	finish(t, long, exited(0))
	info, err := s.Get(short.ID())
	if err != nil {
		t.Fatal(err)
	}
	if want := info.CreatedAt.Add(time.Hour); !info.ExpiresAt.Equal(want) {
		t.Errorf("expiry moved to %v, want %v", info.ExpiresAt, want)
	}
	s.Close()

	// Start-up cleanup removes what has expired.
	clock.Advance(2 * time.Hour)
	s = openStore(t, Options{Dir: dir, Retention: 48 * time.Hour, Now: clock.Now})
	if exists(t, s, short.ID()) || !exists(t, s, long.ID()) {
		t.Error("Open: want the 1-hour capture removed and the 48-hour one kept")
	}
}

func TestRunCleanup(t *testing.T) {
	clock := newFakeClock()
	s := openStore(t, Options{Retention: time.Hour, Now: clock.Now})
	c := create(t, s, Meta{})
	finish(t, c, exited(0))
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		s.RunCleanup(ctx, 5*time.Millisecond)
		close(done)
	}()
	clock.Advance(2 * time.Hour)
	// Poll Get alone: exists would catch the removal between deleting
	// the row and the directory.
	tstest.WaitFor(t, 10*time.Second, "RunCleanup to remove the expired capture", func() bool {
		_, err := s.Get(c.ID())
		return errcode.CodeOf(err) == CodeNotFound
	})
	cancel()
	<-done
	if exists(t, s, c.ID()) { // and now its directory must be gone too
		t.Error("capture came back")
	}
}

// TestPinDefersExpiry: a pinned capture outlives its retention until the
// pin is released, then goes at the next Cleanup.
func TestPinDefersExpiry(t *testing.T) {
	now := time.Now()
	s, err := Open(Options{Dir: t.TempDir(), Retention: time.Minute, Now: func() time.Time { return now }})
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	c, _, err := s.Create(Meta{Op: "run_command", Command: "true"})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Finish(Receipt{Status: StatusExited}); err != nil {
		t.Fatal(err)
	}
	release, err := s.Pin(c.ID())
	if err != nil {
		t.Fatal(err)
	}
	now = now.Add(2 * time.Minute)
	if n, err := s.Cleanup(); err != nil || n != 0 {
		t.Fatalf("Cleanup with a pin removed %d (%v)", n, err)
	}
	if _, err := s.Get(c.ID()); err != nil {
		t.Fatalf("pinned capture gone: %v", err)
	}
	release()
	release()
	if n, err := s.Cleanup(); err != nil || n != 1 {
		t.Fatalf("Cleanup after release removed %d (%v)", n, err)
	}
	if _, err := s.Pin(c.ID()); errcode.CodeOf(err) != CodeNotFound {
		t.Fatalf("Pin of a removed capture: %v", err)
	}
}
