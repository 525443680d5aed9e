//go:build linux || darwin

package sandbox

import (
	"errors"
	"fmt"
	"os"
	"syscall"

	"github.com/hostlink/hostlink/internal/private"
)

// checkPrivateDir returns an error unless dir itself (not a link to one)
// is a directory owned by this user that grants nobody else anything, in
// a place nobody else can replace (private.CheckDir).
func checkPrivateDir(dir string) error {
	fi, err := os.Lstat(dir)
	if err != nil {
		return err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	switch {
	case fi.Mode()&os.ModeSymlink != 0:
		return errors.New("it is a symbolic link")
	case !fi.IsDir():
		return fmt.Errorf("it is not a directory (mode %v)", fi.Mode())
	case !ok || int(st.Uid) != os.Geteuid():
		return fmt.Errorf("it is owned by uid %d", st.Uid)
	case fi.Mode().Perm()&0o077 != 0:
		return fmt.Errorf("others have access to it (mode %#o)", fi.Mode().Perm())
	}
	return private.CheckDir(dir)
}
