//go:build !windows

package update

import "os"

// replace renames next over exe: one rename, so exe is always whole. A
// running process keeps the old file's inode.
func replace(next, exe string) error {
	return os.Rename(next, exe)
}

// removeOld has nothing to remove: replace moves nothing aside here.
func removeOld(string) {}
