//go:build linux || darwin

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"syscall"
)

// checkPrivateDir returns an error unless dir itself (not a link to one)
// is a directory owned by this user that grants nobody else anything, in
// a directory nobody else can replace it in: one of this user's (or
// root's) that others cannot write to, or sticky. The directories above
// that are hostlink's state directory's, as private as they are.
func checkPrivateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		return errors.New("it is a symbolic link")
	case !fi.IsDir():
		return fmt.Errorf("it is not a directory (mode %v)", fi.Mode())
	case owner(fi) != os.Geteuid():
		return fmt.Errorf("it is owned by uid %d", owner(fi))
	case fi.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("others have access to it (mode %#o)", fi.Mode().Perm())
	}
	parent := filepath.Dir(dir)
	pi, err := os.Stat(parent)
	switch {
	case err != nil:
		return err
	case owner(pi) != os.Geteuid() && owner(pi) != 0:
		return fmt.Errorf("%s, where it is, is owned by uid %d, who could replace it", parent, owner(pi))
	case pi.Mode().Perm()&0o022 != 0 && pi.Mode()&os.ModeSticky == 0:
		return fmt.Errorf("%s, where it is, is writable by others (mode %#o), who could replace it", parent, pi.Mode().Perm())
	}
	return nil
}

func owner(fi os.FileInfo) int {
	if st, ok := fi.Sys().(*syscall.Stat_t); ok {
		return int(st.Uid)
	}
	return -1
}
