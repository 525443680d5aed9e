package jail

import (
	"io/fs"
	"os"
	"strings"
	"sync"

	"github.com/hostlink/hostlink/internal/errcode"
)

// Dir is an open directory of a Root whose files are opened by name. A
// search opens every file of a tree: through Root.OpenFile each open walks
// the file's whole path again, one directory at a time; through the Dir of
// its directory it is a single open below a handle the walk checked.
type Dir struct {
	r    *Root
	path Path   // canonical
	h    handle // the directory, reached by an identity-checked walk
	once sync.Once
}

// OpenDirectory opens directory p of r for opening its files with
// Dir.OpenFile. It is refused like any operation on p (protected paths).
// The Dir's handle stays valid after r is closed, until Dir.Close.
func (r *Root) OpenDirectory(p Path) (*Dir, error) {
	if err := r.acquire(); err != nil {
		return nil, err
	}
	defer r.release()
	d, err := walk(r, p, walkOpts{}, r.openDir)
	if err != nil {
		return nil, translate(err, p)
	}
	return &Dir{r: r, path: pathOf(d.canon), h: d.h}, nil
}

// Path returns the directory's canonical root-relative path.
func (d *Dir) Path() Path { return d.path }

// Close releases the directory handle.
func (d *Dir) Close() error {
	d.once.Do(func() { closeHandle(d.h) })
	return nil
}

// OpenFile opens the regular file called name (one path component) in d
// for reading, as Root.OpenFile opens d's path joined with name: FIFOs,
// devices and (unless allowed) files with several links are refused
// without blocking, and a symlink is resolved from the root like any path.
func (d *Dir) OpenFile(name string) (*os.File, fs.FileInfo, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) ||
		(d.r.goos == "windows" && strings.Contains(name, ":")) { // alternate data streams
		return nil, nil, errcode.New(errcode.InvalidArgument, "%q is not a name in a directory", name)
	}
	p := Path{joinRel(d.path.rel, name)}
	h, err := openFileAt(d.h, name, openReadFlags, 0)
	if err != nil && err != errSymlink {
		return nil, nil, translate(openError(d.h, name, p, err), p)
	}
	var st objStat
	if err == nil {
		st, err = statHandle(h, name)
		if err == nil && st.info.Mode()&fs.ModeSymlink != 0 {
			closeHandle(h)
			err = errSymlink // Windows opens the link itself
		}
	}
	if err == errSymlink {
		return d.r.OpenFile(p)
	}
	if err == nil {
		err = d.r.checkRegular(st, splitRel(p.rel), p)
	}
	if err != nil {
		closeHandle(h)
		return nil, nil, translate(err, p)
	}
	return os.NewFile(uintptr(h), name), st.info, nil
}
