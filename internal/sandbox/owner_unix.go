//go:build linux || darwin

package sandbox

import (
	"os"
	"strconv"
	"syscall"
)

func tmpRootName() string { return "hostlink-sandbox-" + strconv.Itoa(os.Getuid()) }

// ownedPrivately reports whether fi is owned by this user and closed to
// everyone else.
func ownedPrivately(fi os.FileInfo) bool {
	st, ok := fi.Sys().(*syscall.Stat_t)
	return ok && int(st.Uid) == os.Getuid() && fi.Mode().Perm()&0o077 == 0
}
