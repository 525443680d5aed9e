//go:build unix

package capture

import (
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
)

func TestModes(t *testing.T) {
	// A permissive umask must not leak into the store's files.
	old := syscall.Umask(0)
	defer syscall.Umask(old)
	s := openStore(t, Options{})
	c := create(t, s, Meta{})
	write(t, c, Stderr, []byte("x"))
	finish(t, c, exited(0))
	err := filepath.WalkDir(s.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, err := os.Stat(path)
		if err != nil {
			return err
		}
		want := fs.FileMode(0o600)
		if fi.IsDir() {
			want = 0o700
		}
		if got := fi.Mode().Perm(); got != want {
			t.Errorf("%s: mode %#o, want %#o", path, got, want)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
