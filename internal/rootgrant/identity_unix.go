//go:build !windows

package rootgrant

import (
	"io/fs"

	"golang.org/x/sys/unix"
)

// identify opens the directory itself (never following a final symlink)
// and reads its device and inode from the open handle, so the identity is
// that of what was opened and an unreadable directory is refused.
func identify(dir string) (FileID, error) {
	fd, err := unix.Open(dir, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
	if err != nil {
		if err == unix.ELOOP || err == unix.ENOTDIR {
			return FileID{}, unavailable("the directory changed into a link or file")
		}
		return FileID{}, unavailableErr(err)
	}
	defer unix.Close(fd)
	var st unix.Stat_t
	if err := unix.Fstat(fd, &st); err != nil {
		return FileID{}, unavailableErr(err)
	}
	return FileID{Volume: uint64(st.Dev), File: uint64(st.Ino)}, nil
}

func isLink(fi fs.FileInfo) bool { return fi.Mode()&fs.ModeSymlink != 0 }
