package files

import (
	"io/fs"
	"syscall"
)

// fileIdentity returns the creation time: an atomic replace publishes a new
// file with a new creation time.
func fileIdentity(fi fs.FileInfo) []int64 {
	d, ok := fi.Sys().(*syscall.Win32FileAttributeData)
	if !ok {
		return nil
	}
	return []int64{d.CreationTime.Nanoseconds()}
}

// owner is not meaningful on Windows (ownership is an ACL matter).
func owner(fs.FileInfo) (uid, gid *int) { return nil, nil }
