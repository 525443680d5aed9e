//go:build unix

package private

import (
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// MkdirAll creates dir and any missing parents, and sets dir itself to mode
// 0700 even if it already existed. Parents it creates get 0700 too (less
// umask); existing parents are left alone.
func MkdirAll(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	return os.Chmod(dir, 0o700)
}

// OpenFile is os.OpenFile with a private mode: a file it creates gets 0600,
// and an existing file that grants group or others any access is changed
// to 0600 before it is returned.
func OpenFile(name string, flag int) (*os.File, error) {
	f, err := os.OpenFile(name, flag, 0o600)
	if err != nil {
		return nil, err
	}
	fi, err := f.Stat()
	if err == nil && fi.Mode().Perm()&0o077 != 0 {
		err = f.Chmod(0o600)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// Check returns an error wrapping ErrNotPrivate if path (after following
// symlinks) grants group or others any permission bit, or is owned by a
// user other than the effective user: the owner can chmod it at will.
func Check(path string) error {
	fi, err := os.Stat(path)
	if err != nil {
		return err
	}
	if perm := fi.Mode().Perm(); perm&0o077 != 0 {
		return &fs.PathError{Op: "check", Path: path, Err: fmt.Errorf("%w: mode %#o", ErrNotPrivate, perm)}
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); ok && int(st.Uid) != os.Geteuid() {
		return &fs.PathError{Op: "check", Path: path, Err: fmt.Errorf("%w: owned by uid %d", ErrNotPrivate, st.Uid)}
	}
	return nil
}
