//go:build unix

package private

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"github.com/hostlink/hostlink/internal/tstest"
)

func mode(t *testing.T, name string) fs.FileMode {
	t.Helper()
	fi, err := os.Stat(name)
	if err != nil {
		t.Fatal(err)
	}
	return fi.Mode().Perm()
}

func TestMkdirAllMode(t *testing.T) {
	tests := []struct {
		name     string
		existing fs.FileMode // 0: dir does not exist yet
	}{
		{"new", 0},
		{"existing 0755", 0o755},
		{"existing 0777", 0o777},
		{"existing 0700", 0o700},
		{"existing 0500", 0o500},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir := filepath.Join(t.TempDir(), "a", "b")
			if tt.existing != 0 {
				if err := os.MkdirAll(dir, 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(dir, tt.existing); err != nil {
					t.Fatal(err)
				}
			}
			if err := MkdirAll(dir); err != nil {
				t.Fatal(err)
			}
			if got := mode(t, dir); got != 0o700 {
				t.Errorf("mode = %#o, want 0700", got)
			}
			if err := Check(dir); err != nil {
				t.Error(err)
			}
		})
	}
}

func TestOpenFileMode(t *testing.T) {
	tests := []struct {
		name     string
		existing fs.FileMode // 0: file does not exist yet
		flag     int
		want     fs.FileMode
	}{
		{"create", 0, os.O_WRONLY | os.O_CREATE, 0o600},
		{"create excl", 0, os.O_WRONLY | os.O_CREATE | os.O_EXCL, 0o600},
		{"existing 0644", 0o644, os.O_WRONLY | os.O_CREATE | os.O_APPEND, 0o600},
		{"existing 0666 read-only open", 0o666, os.O_RDONLY, 0o600},
		{"existing 0604", 0o604, os.O_RDWR, 0o600},
		{"existing 0600", 0o600, os.O_RDWR, 0o600},
		{"existing 0400 stays", 0o400, os.O_RDONLY, 0o400},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			name := filepath.Join(t.TempDir(), "f")
			if tt.existing != 0 {
				if err := os.WriteFile(name, []byte("x"), tt.existing); err != nil {
					t.Fatal(err)
				}
				if err := os.Chmod(name, tt.existing); err != nil { // beat the umask
					t.Fatal(err)
				}
			}
			f, err := OpenFile(name, tt.flag)
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if got := mode(t, name); got != tt.want {
				t.Errorf("mode = %#o, want %#o", got, tt.want)
			}
		})
	}
}

func TestWriteFileReplacesLooseFile(t *testing.T) {
	name := filepath.Join(t.TempDir(), "key")
	if err := os.WriteFile(name, []byte("old"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := WriteFile(name, []byte("new")); err != nil {
		t.Fatal(err)
	}
	if got := mode(t, name); got != 0o600 {
		t.Errorf("mode = %#o, want 0600", got)
	}
}

func TestCheckMode(t *testing.T) {
	tests := []struct {
		mode fs.FileMode
		dir  bool
		ok   bool
	}{
		{0o600, false, true},
		{0o400, false, true},
		{0o700, false, true},
		{0o640, false, false},
		{0o604, false, false},
		{0o620, false, false},
		{0o602, false, false},
		{0o610, false, false},
		{0o644, false, false},
		{0o700, true, true},
		{0o750, true, false},
		{0o711, true, false},
		{0o755, true, false},
	}
	for _, tt := range tests {
		name := filepath.Join(t.TempDir(), "p")
		var err error
		if tt.dir {
			err = os.Mkdir(name, 0o700)
		} else {
			err = os.WriteFile(name, nil, 0o600)
		}
		if err != nil {
			t.Fatal(err)
		}
		if err := os.Chmod(name, tt.mode); err != nil {
			t.Fatal(err)
		}
		err = Check(name)
		if tt.ok && err != nil {
			t.Errorf("Check(%#o, dir=%v) = %v, want nil", tt.mode, tt.dir, err)
		}
		if !tt.ok && !errors.Is(err, ErrNotPrivate) {
			t.Errorf("Check(%#o, dir=%v) = %v, want ErrNotPrivate", tt.mode, tt.dir, err)
		}
	}
}

func TestCheckOwner(t *testing.T) {
	tstest.Root(t) // to give a file to another user
	name := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(name, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Chown(name, 4242, 4242); err != nil {
		t.Fatal(err)
	}
	if err := Check(name); !errors.Is(err, ErrNotPrivate) {
		t.Errorf("Check(file of uid 4242) = %v, want ErrNotPrivate", err)
	}
}
