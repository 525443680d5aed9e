package jail

import "io/fs"

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
