//go:build unix

package private

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
)

// mkdirAll is MkdirAll on Unix.
func mkdirAll(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	if err := checkOwned(dir); err != nil {
		return err
	}
	return os.Chmod(dir, 0o700)
}

// checkOwned returns an error unless dir is a directory owned by the
// effective user, and, if dir itself is a symbolic link, the link is too.
func checkOwned(dir string) error {
	li, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	if li.Mode()&fs.ModeSymlink != 0 {
		if uid := owner(li); uid != os.Geteuid() {
			return &fs.PathError{Op: "mkdir", Path: dir, Err: fmt.Errorf("%w: a symbolic link owned by uid %d; not following it", ErrNotPrivate, uid)}
		}
	}
	fi, err := os.Stat(dir)
	if err != nil {
		return err
	}
	if !fi.IsDir() {
		return &fs.PathError{Op: "mkdir", Path: dir, Err: syscall.ENOTDIR}
	}
	if uid := owner(fi); uid != os.Geteuid() {
		return &fs.PathError{Op: "mkdir", Path: dir, Err: fmt.Errorf("%w: owned by uid %d; not using it", ErrNotPrivate, uid)}
	}
	return nil
}

func owner(fi fs.FileInfo) int {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid)
	}
	return -1
}

// openFile is OpenFile on Unix.
func openFile(name string, flag int) (*os.File, error) {
	f, err := os.OpenFile(name, flag|syscall.O_NOFOLLOW, 0o600)
	if err != nil {
		if errors.Is(err, syscall.ELOOP) {
			return nil, &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("%w: it is a symbolic link; hostlink does not follow links to its own files", ErrNotPrivate)}
		}
		return nil, err
	}
	fi, err := f.Stat()
	switch {
	case err != nil:
	case !fi.Mode().IsRegular():
		err = &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("not a regular file (mode %v)", fi.Mode())}
	case owner(fi) != os.Geteuid():
		err = &fs.PathError{Op: "open", Path: name, Err: fmt.Errorf("%w: owned by uid %d", ErrNotPrivate, owner(fi))}
	case fi.Mode().Perm()&0o077 != 0:
		err = f.Chmod(0o600)
	}
	if err != nil {
		f.Close()
		return nil, err
	}
	return f, nil
}

// CheckDir returns an error unless dir is the user's own directory that
// nobody else can write or replace: dir must be owned by the effective
// user and writable by nobody else, and every directory above it (after
// resolving symbolic links) must be owned by root or the user and either
// writable by nobody else or sticky, so that no one else can rename dir
// away and put their own in its place. Sockets and lock files live in
// such a directory.
func CheckDir(dir string) error {
	real, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return err
	}
	real, err = filepath.Abs(real)
	if err != nil {
		return err
	}
	fi, err := os.Lstat(real)
	if err != nil {
		return err
	}
	switch {
	case !fi.IsDir():
		return &fs.PathError{Op: "check", Path: dir, Err: syscall.ENOTDIR}
	case owner(fi) != os.Geteuid():
		return &fs.PathError{Op: "check", Path: dir, Err: fmt.Errorf("%w: owned by uid %d", ErrNotPrivate, owner(fi))}
	case fi.Mode().Perm()&0o022 != 0:
		return &fs.PathError{Op: "check", Path: dir, Err: fmt.Errorf("%w: writable by others (mode %#o)", ErrNotPrivate, fi.Mode().Perm())}
	}
	for p := filepath.Dir(real); ; p = filepath.Dir(p) {
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		if uid := owner(fi); uid != 0 && uid != os.Geteuid() {
			return &fs.PathError{Op: "check", Path: dir, Err: fmt.Errorf("%w: %s above it is owned by uid %d, who could replace it", ErrNotPrivate, p, uid)}
		}
		if fi.Mode().Perm()&0o022 != 0 && fi.Mode()&fs.ModeSticky == 0 {
			return &fs.PathError{Op: "check", Path: dir, Err: fmt.Errorf("%w: %s above it is writable by others (mode %#o) without the sticky bit, so anyone could replace it", ErrNotPrivate, p, fi.Mode().Perm())}
		}
		if p == filepath.Dir(p) {
			return nil
		}
	}
}

// check is Check on Unix.
func check(path string) error {
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

// openShared is OpenShared on Unix, where any open file may be renamed or
// removed.
func openShared(path string) (*os.File, error) { return os.Open(path) }
