//go:build unix

package audit

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/hostlink/hostlink/internal/private"
)

// Windows does not let another program delete or rename the open log, so
// these cases only arise on Unix.
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
