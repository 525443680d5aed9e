//go:build !windows

package files

import (
	"io/fs"
	"os"
	"syscall"
)

// fileIdentity returns device, inode and change time: an atomic replace
// gives a new inode, an in-place write a new change time.
func fileIdentity(_ *os.File, fi fs.FileInfo) []int64 {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil
	}
	return []int64{int64(st.Dev), int64(st.Ino), ctimeNanos(st)}
}

// owner returns the file's uid and gid.
func owner(fi fs.FileInfo) (uid, gid *int) {
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return nil, nil
	}
	u, g := int(st.Uid), int(st.Gid)
	return &u, &g
}
