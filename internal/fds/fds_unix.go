//go:build linux || darwin

package fds

import (
	"os"
	"strconv"

	"golang.org/x/sys/unix"
)

// markDir marks close-on-exec every descriptor above 2 listed in dir
// (/proc/self/fd or /dev/fd). The descriptor reading dir is among them;
// it is close-on-exec already, and closed when the listing is done.
func markDir(dir string) error {
	entries, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range entries {
		fd, err := strconv.Atoi(e.Name())
		if err != nil || fd <= 2 {
			continue
		}
		flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
		if err != nil {
			continue // the listing's own descriptor, closed since
		}
		if flags&unix.FD_CLOEXEC == 0 {
			if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, flags|unix.FD_CLOEXEC); err != nil {
				return err
			}
		}
	}
	return nil
}
