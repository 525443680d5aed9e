//go:build unix

package jail

import (
	"io/fs"
	"os"
	"time"

	"golang.org/x/sys/unix"
)

// listing is an open directory being listed: its entries are read with
// their types from the directory itself and described relative to its
// handle, a name at a time (a name from the directory is one component,
// so describing it cannot leave the directory).
type listing struct {
	dir *os.File // opened through the root
	raw *os.File // the same directory, read without describing each entry
	fd  int      // raw's
}

func (r *Root) openListing(p Path) (*listing, error) {
	f, err := r.root.Open(p.os())
	if err != nil {
		return nil, err
	}
	// A File opened in an os.Root describes every entry as it reads the
	// directory; one made from a duplicate of its descriptor reads types
	// only, from the directory's own records.
	fd, err := unix.Dup(int(f.Fd()))
	if err != nil {
		f.Close()
		return nil, err
	}
	unix.CloseOnExec(fd)
	return &listing{dir: f, raw: os.NewFile(uintptr(fd), f.Name()), fd: fd}, nil
}

func (l *listing) close() {
	l.raw.Close()
	l.dir.Close()
}

func (l *listing) entries() ([]string, []fs.FileMode, error) {
	ents, err := l.raw.ReadDir(-1)
	if err != nil {
		return nil, nil, err
	}
	names := make([]string, len(ents))
	types := make([]fs.FileMode, len(ents))
	for i, e := range ents {
		names[i], types[i] = e.Name(), e.Type()
	}
	return names, types, nil
}

func (l *listing) lstat(name string) (fs.FileInfo, error) {
	var st unix.Stat_t
	for {
		err := unix.Fstatat(l.fd, name, &st, unix.AT_SYMLINK_NOFOLLOW)
		if err == unix.EINTR {
			continue
		}
		if err != nil {
			return nil, err
		}
		return &statInfo{name: name, st: st}, nil
	}
}

// statInfo is an fs.FileInfo from fstatat, filled as package os fills its
// own. Sys returns the *unix.Stat_t.
type statInfo struct {
	name string
	st   unix.Stat_t
}

func (s *statInfo) Name() string       { return s.name }
func (s *statInfo) Size() int64        { return s.st.Size }
func (s *statInfo) ModTime() time.Time { return time.Unix(s.st.Mtim.Unix()) }
func (s *statInfo) IsDir() bool        { return s.Mode().IsDir() }
func (s *statInfo) Sys() any           { return &s.st }

func (s *statInfo) Mode() fs.FileMode {
	m := uint32(s.st.Mode)
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
