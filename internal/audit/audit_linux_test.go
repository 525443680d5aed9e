package audit

import (
	"errors"
	"os"
	"syscall"
	"testing"
)

// TestStickyWriteError points the log at /dev/full, where every write
// fails with ENOSPC, and checks that the failure sticks.
func TestStickyWriteError(t *testing.T) {
	l := openLog(t, t.TempDir(), 0)
	full, err := os.OpenFile("/dev/full", os.O_WRONLY, 0)
	if err != nil {
		t.Skip(err)
	}
	l.mu.Lock()
	l.f.Close()
	l.f, l.path = full, full.Name()
	l.mu.Unlock()

	if err := l.Check(); err != nil {
		t.Fatalf("Check before any write = %v", err)
	}
	err = l.Append(record(1))
	if !errors.Is(err, syscall.ENOSPC) {
		t.Fatalf("Append = %v, want ENOSPC", err)
	}
	for name, got := range map[string]error{"Check": l.Check(), "Append": l.Append(record(2))} {
		if got != err {
			t.Errorf("%s after a failed write = %v, want the sticky %v", name, got, err)
		}
	}
}

// Root can write anywhere permissions allow, but not into /proc.
func TestOpenUnwritableProcDir(t *testing.T) {
	if l, err := Open(Options{Dir: "/proc/self/hostlink-audit", Key: testKey}); err == nil {
		l.Close()
		t.Fatal("Open succeeded in /proc")
	}
}
