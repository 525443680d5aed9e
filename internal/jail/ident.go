package jail

import (
	"io/fs"
	"strconv"
)

// ident is what makes an object itself, whatever names lead to it: the
// device and inode on Unix, the volume serial number and file index on
// Windows.
type ident struct{ dev, ino uint64 }

// objStat is what a walk learns about an object from one stat.
type objStat struct {
	id    ident
	nlink uint64
	info  fs.FileInfo
}

// SameFile reports whether a and b, from this package's Stat, Lstat or
// OpenFile, describe the same object (os.SameFile knows only os's own
// FileInfo).
func SameFile(a, b fs.FileInfo) bool {
	x, ok1 := a.(*fileInfo)
	y, ok2 := b.(*fileInfo)
	return ok1 && ok2 && x.id == y.id
}

// ID is the identity of the object fi describes, as text, or "" when fi
// is not from this package's Stat, Lstat, OpenFile or a Check: what an
// approval binds an object by.
func ID(fi fs.FileInfo) string {
	x, ok := fi.(*fileInfo)
	if !ok {
		return ""
	}
	return x.id.String()
}

// EntryID is the identity of an entry WalkDir passes to its function (see
// ID), valid during that call only; "" when it cannot be learnt. Where the
// listing's Info carries no identity (Windows lists no file index) it
// describes the entry below the walk's directory handle.
func EntryID(d fs.DirEntry) string {
	e, ok := d.(*dirEntry)
	switch {
	case !ok:
		return ""
	case e.st != nil:
		return e.st.id.String()
	}
	if fi, err := e.info(); err == nil {
		if id := ID(fi); id != "" {
			return id
		}
	}
	if e.in == nil || e.in.left {
		return ""
	}
	st, err := lstatAt(e.in.h, e.name)
	if err != nil {
		return ""
	}
	return st.id.String()
}

func (id ident) String() string {
	return strconv.FormatUint(id.dev, 16) + ":" + strconv.FormatUint(id.ino, 16)
}
