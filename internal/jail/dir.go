package jail

import (
	"io/fs"
	"os"
	"strings"

	"github.com/hostlink/hostlink/internal/errcode"
)

// Dir is an open directory of a Root whose files are opened by name. A
// search opens every file of a tree: through Root.OpenFile each open walks
// the file's whole path again, one directory at a time; through the Dir of
// its directory it is a single open below a handle that cannot be left.
type Dir struct {
	r    *Root
	path Path
	root *os.Root // the directory; names opened in it cannot resolve outside it
}

// OpenDirectory opens directory p of r for opening its files with
// Dir.OpenFile. It is refused like any operation on p (protected paths).
func (r *Root) OpenDirectory(p Path) (*Dir, error) {
	if err := r.shield(p); err != nil {
		return nil, err
	}
	sub, err := r.root.OpenRoot(p.os())
	if err != nil {
		return nil, translate(err, p)
	}
	return &Dir{r: r, path: p, root: sub}, nil
}

// Path returns the directory's root-relative path.
func (d *Dir) Path() Path { return d.path }

// Close releases the directory handle.
func (d *Dir) Close() error { return d.root.Close() }

// OpenFile opens the regular file called name (one path component) in d
// for reading, as Root.OpenFile opens d's path joined with name: FIFOs and
// devices are refused without blocking, and a symlink is followed only
// while it stays inside d (and, when r protects directories, not into one).
func (d *Dir) OpenFile(name string) (*os.File, fs.FileInfo, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/\`) ||
		(d.r.goos == "windows" && strings.Contains(name, ":")) { // alternate data streams
		return nil, nil, errcode.New(errcode.InvalidArgument, "%q is not a name in a directory", name)
	}
	p := Path{name}
	if !d.path.IsRoot() {
		p = Path{d.path.rel + "/" + name}
	}
	// A protected directory can lie inside d, and a symlink in d could lead
	// into it: check the path as Root.OpenFile does.
	if err := d.r.shield(p); err != nil {
		return nil, nil, err
	}
	return openRegular(d.root, name, p)
}
