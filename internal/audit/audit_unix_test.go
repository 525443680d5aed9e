//go:build unix

package audit

import (
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/private"
)

// Removing an open file works differently on Windows (the log is opened
// sharing delete access, so that other writers can rotate it), so these
// cases run on Unix; TestCatchUpDamage covers renames everywhere.
func TestCheckRemovedOrReplaced(t *testing.T) {
	tests := []struct {
		name   string
		change func(t *testing.T, path string)
	}{
		{"removed", func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
		}},
		{"renamed away", func(t *testing.T, path string) {
			if err := os.Rename(path, path+".old"); err != nil {
				t.Fatal(err)
			}
		}},
		{"replaced", func(t *testing.T, path string) {
			if err := os.WriteFile(path+".new", nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(path+".new", path); err != nil {
				t.Fatal(err)
			}
		}},
		{"replaced by a symlink to itself", func(t *testing.T, path string) {
			if err := os.Rename(path, path+".real"); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(path+".real", path); err != nil {
				t.Fatal(err)
			}
		}},
		{"rotated, then the rotated file removed", func(t *testing.T, path string) {
			rotated := filepath.Join(filepath.Dir(path), logName+".20990101-000000")
			if err := os.Rename(path, rotated); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(path, nil, 0o600); err != nil {
				t.Fatal(err)
			}
			if err := os.Remove(rotated); err != nil {
				t.Fatal(err)
			}
		}},
		{"removed, and a new log opened", func(t *testing.T, path string) {
			if err := os.Remove(path); err != nil {
				t.Fatal(err)
			}
			openLog(t, filepath.Dir(path), 0)
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			l := openLog(t, t.TempDir(), 0)
			if err := l.Append(record(1)); err != nil {
				t.Fatal(err)
			}
			if err := l.Check(); err != nil {
				t.Fatal(err)
			}
			tt.change(t, l.Path())
			err := l.Check()
			if err == nil {
				t.Fatal("Check succeeded")
			}
			if err2 := l.Append(record(2)); err2 == nil || err2.Error() != err.Error() {
				t.Errorf("Append after Check failed = %v, want the same error %v", err2, err)
			}
		})
	}
}

func TestOpenUnwritableDir(t *testing.T) {
	if os.Geteuid() == 0 {
		t.Skip("root can write to a 0500 directory")
	}
	dir := t.TempDir()
	if err := os.Chmod(dir, 0o500); err != nil {
		t.Fatal(err)
	}
	defer os.Chmod(dir, 0o700)
	if l, err := Open(Options{Dir: dir, Key: testKey}); err == nil {
		l.Close()
		t.Fatal("Open succeeded in a read-only directory")
	}
}

func TestFileModes(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "audit")
	writeLog(t, dir, 30, 1500)
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	paths := []string{dir}
	for _, e := range entries {
		paths = append(paths, filepath.Join(dir, e.Name()))
	}
	for _, p := range paths {
		if err := private.Check(p); err != nil {
			t.Error(err)
		}
	}
}

func TestKeyModes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "keys", "audit.key")
	if _, err := LoadOrCreateKey(path); err != nil {
		t.Fatal(err)
	}
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatal(err)
	}
	if fi.Mode().Perm() != 0o600 {
		t.Errorf("key file mode = %v, want 0600", fi.Mode().Perm())
	}
	for _, mode := range []os.FileMode{0o644, 0o640, 0o604, 0o660} {
		if err := os.Chmod(path, mode); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadOrCreateKey(path); !errors.Is(err, private.ErrNotPrivate) {
			t.Errorf("LoadOrCreateKey(%#o key) = %v, want ErrNotPrivate", mode, err)
		}
	}
}

// TestLockFileRemoved removes audit.lock while a Log has it open: the next
// Log creates a new one, and the first must lock that one too, or the two
// would not exclude each other.
func TestLockFileRemoved(t *testing.T) {
	dir := t.TempDir()
	a := openLog(t, dir, 0)
	appendN(t, a, 1)
	if err := os.Remove(filepath.Join(dir, lockName)); err != nil {
		t.Fatal(err)
	}
	b := openLog(t, dir, 0)
	appendN(t, a, 1)
	if same, err := sameFile(a.lockFile, filepath.Join(dir, lockName)); !same {
		t.Fatalf("a does not lock the new audit.lock (%v)", err)
	}
	defer func(d time.Duration) { lockTimeout = d }(lockTimeout)
	lockTimeout = 50 * time.Millisecond
	b.mu.Lock()
	if err := b.lock(); err != nil {
		t.Fatal(err)
	}
	if err := a.Append(record(3)); !errors.Is(err, ErrLocked) {
		t.Errorf("Append while the other Log holds the lock = %v, want ErrLocked", err)
	}
	b.unlock()
	b.mu.Unlock()
	appendN(t, b, 1)
	appendN(t, a, 1)
	if rep := mustVerify(t, dir); rep.Records != 4 {
		t.Errorf("records = %d, want 4", rep.Records)
	}
}
