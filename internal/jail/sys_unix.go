//go:build unix

package jail

import (
	"io/fs"
	"os"
	"syscall"
	"time"
	"unsafe"

	"golang.org/x/sys/unix"
)

// handle is an open directory: a file descriptor.
type handle = int

// fileInfo is an fs.FileInfo from a stat taken below a directory handle.
// Sys returns the *syscall.Stat_t, as os.Stat's does.
type fileInfo struct {
	name string
	id   ident
	st   unix.Stat_t
}

// unix.Stat_t and syscall.Stat_t are the same C struct; these fail to
// compile if they ever differ in size.
var (
	_ [unsafe.Sizeof(unix.Stat_t{}) - unsafe.Sizeof(syscall.Stat_t{})]byte
	_ [unsafe.Sizeof(syscall.Stat_t{}) - unsafe.Sizeof(unix.Stat_t{})]byte
)

func (fi *fileInfo) Name() string       { return fi.name }
func (fi *fileInfo) Size() int64        { return fi.st.Size }
func (fi *fileInfo) ModTime() time.Time { return time.Unix(fi.st.Mtim.Unix()) }
func (fi *fileInfo) IsDir() bool        { return fi.Mode().IsDir() }
func (fi *fileInfo) Sys() any           { return (*syscall.Stat_t)(unsafe.Pointer(&fi.st)) }

func (fi *fileInfo) Mode() fs.FileMode {
	m := uint32(fi.st.Mode)
	mode := fs.FileMode(m & 0o777)
	switch m & unix.S_IFMT {
	case unix.S_IFBLK:
		mode |= fs.ModeDevice
	case unix.S_IFCHR:
		mode |= fs.ModeDevice | fs.ModeCharDevice
	case unix.S_IFDIR:
		mode |= fs.ModeDir
	case unix.S_IFIFO:
		mode |= fs.ModeNamedPipe
	case unix.S_IFLNK:
		mode |= fs.ModeSymlink
	case unix.S_IFSOCK:
		mode |= fs.ModeSocket
	}
	if m&unix.S_ISGID != 0 {
		mode |= fs.ModeSetgid
	}
	if m&unix.S_ISUID != 0 {
		mode |= fs.ModeSetuid
	}
	if m&unix.S_ISVTX != 0 {
		mode |= fs.ModeSticky
	}
	return mode
}

func statOf(name string, st *unix.Stat_t) objStat {
	id := ident{uint64(st.Dev), uint64(st.Ino)}
	return objStat{id: id, nlink: uint64(st.Nlink), info: &fileInfo{name: name, id: id, st: *st}}
}

// ignoringEINTR retries f while a signal interrupts it.
func ignoringEINTR(f func() error) error {
	for {
		if err := f(); err != unix.EINTR {
			return err
		}
	}
}

func closeHandle(h handle) { unix.Close(h) }

// openRootDir opens the directory at an absolute path, following links:
// the root's own path is the user's choice, resolved once at Open.
func openRootDir(path string) (h handle, err error) {
	err = ignoringEINTR(func() error {
		h, err = unix.Open(path, unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		return err
	})
	return h, err
}

// identityOf returns the identity of what path names, following links.
func identityOf(path string) (ident, error) {
	var st unix.Stat_t
	if err := ignoringEINTR(func() error { return unix.Stat(path, &st) }); err != nil {
		return ident{}, err
	}
	return ident{uint64(st.Dev), uint64(st.Ino)}, nil
}

// isLink reports whether name in dir is a symlink, to tell a link from
// another reason an open with O_NOFOLLOW failed.
func isLink(dir handle, name string) bool {
	st, err := lstatAt(dir, name)
	return err == nil && st.info.Mode()&fs.ModeSymlink != 0
}

// openDirAt opens the directory name in dir without following a symlink:
// a symlink is errSymlink.
func openDirAt(dir handle, name string) (h handle, err error) {
	err = ignoringEINTR(func() error {
		h, err = unix.Openat(dir, name, dirOpenFlags|unix.O_DIRECTORY|unix.O_NOFOLLOW|unix.O_CLOEXEC, 0)
		return err
	})
	if (err == unix.ELOOP || err == unix.ENOTDIR || err == unix.EMLINK) && isLink(dir, name) {
		return -1, errSymlink
	}
	return h, err
}

// statHandle describes the object h is open on.
func statHandle(h handle, name string) (objStat, error) {
	var st unix.Stat_t
	if err := ignoringEINTR(func() error { return unix.Fstat(h, &st) }); err != nil {
		return objStat{}, err
	}
	return statOf(name, &st), nil
}

// lstatAt describes name in dir without following a symlink.
func lstatAt(dir handle, name string) (objStat, error) {
	var st unix.Stat_t
	if err := ignoringEINTR(func() error { return unix.Fstatat(dir, name, &st, unix.AT_SYMLINK_NOFOLLOW) }); err != nil {
		return objStat{}, err
	}
	return statOf(name, &st), nil
}

// readlinkAt returns the target of the symlink name in dir.
func readlinkAt(dir handle, name string) (string, error) {
	for size := 256; ; size *= 2 {
		buf := make([]byte, size)
		var n int
		err := ignoringEINTR(func() error {
			var err error
			n, err = unix.Readlinkat(dir, name, buf)
			return err
		})
		if err != nil {
			return "", err
		}
		if n < size {
			return string(buf[:n]), nil
		}
	}
}

// openFileAt opens name in dir without following a symlink (errSymlink).
// Reads never block (a FIFO), and a terminal never becomes hostlink's.
func openFileAt(dir handle, name string, flag int, perm fs.FileMode) (h handle, err error) {
	err = ignoringEINTR(func() error {
		h, err = unix.Openat(dir, name, flag|unix.O_NOFOLLOW|unix.O_CLOEXEC|unix.O_NOCTTY, uint32(perm.Perm()))
		return err
	})
	if err != nil && flag&(os.O_CREATE|os.O_EXCL) != os.O_CREATE|os.O_EXCL &&
		(err == unix.ELOOP || err == unix.EMLINK || err == unix.ENOTDIR) && isLink(dir, name) {
		return -1, errSymlink
	}
	return h, err
}

// openReadFlags open a file for reading without blocking on a FIFO.
const openReadFlags = os.O_RDONLY | unix.O_NONBLOCK

func mkdirAt(dir handle, name string, perm fs.FileMode) error {
	return ignoringEINTR(func() error { return unix.Mkdirat(dir, name, uint32(perm.Perm())) })
}

// removeAt deletes name in dir. want is the identity the entry must have
// where the OS deletes through a handle on it (Windows); Unix has no
// unlink of a given inode, so the caller's look in dir just before is the
// last.
func removeAt(dir handle, name string, isDir bool, _ *ident) error {
	flags := 0
	if isDir {
		flags = unix.AT_REMOVEDIR
	}
	return ignoringEINTR(func() error { return unix.Unlinkat(dir, name, flags) })
}

// renameAt renames oname in odir to nname in ndir; want as for removeAt.
func renameAt(odir handle, oname string, ndir handle, nname string, _ *ident) error {
	return ignoringEINTR(func() error { return unix.Renameat(odir, oname, ndir, nname) })
}

func linkAt(odir handle, oname string, ndir handle, nname string) error {
	return ignoringEINTR(func() error { return unix.Linkat(odir, oname, ndir, nname, 0) })
}

// isNotEmpty and isInvalidName recognise errors only Windows has (Unix's
// ENOTEMPTY is matched as syscall.ENOTEMPTY).
func isNotEmpty(error) bool    { return false }
func isInvalidName(error) bool { return false }

// entryInfo describes the entry e of the directory h.
func entryInfo(h handle, e fs.DirEntry) (fs.FileInfo, error) {
	st, err := lstatAt(h, e.Name())
	if err != nil {
		return nil, err
	}
	return st.info, nil
}

// openListing opens the directory h again for reading its entries (h may
// be an O_PATH handle, which cannot be read).
func openListing(h handle) (fd int, err error) {
	err = ignoringEINTR(func() error {
		fd, err = unix.Openat(h, ".", unix.O_RDONLY|unix.O_DIRECTORY|unix.O_CLOEXEC, 0)
		return err
	})
	return fd, err
}
