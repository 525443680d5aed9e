package jail

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"
	"strings"

	"github.com/hostlink/hostlink/internal/errcode"
)

// maxHops bounds symlink resolution in Real, as the kernel's ELOOP does.
const maxHops = 40

// Lstat describes p without following a final symlink. A symlink whose
// target is outside the root is refused.
func (r *Root) Lstat(p Path) (fs.FileInfo, error) {
	if err := r.shield(p); err != nil {
		return nil, err
	}
	fi, err := r.root.Lstat(p.os())
	if err != nil {
		return nil, translate(err, p)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		if err := r.linkInside(p); err != nil {
			return nil, err
		}
	}
	return fi, nil
}

// Stat describes p, following symlinks that stay inside the root.
func (r *Root) Stat(p Path) (fs.FileInfo, error) {
	if err := r.shield(p); err != nil {
		return nil, err
	}
	fi, err := r.root.Stat(p.os())
	return fi, translate(err, p)
}

// LinkTarget reports a symlink's target text and whether following it stays
// inside the root (a dangling link inside the root counts as inside). It is
// for listings, which show outside links without following them.
func (r *Root) LinkTarget(p Path) (target string, inside bool, err error) {
	if err := r.shield(p); err != nil {
		return "", false, err
	}
	target, err = r.root.Readlink(p.os())
	if err != nil {
		return "", false, translate(err, p)
	}
	_, serr := r.root.Stat(p.os())
	return target, serr == nil || !isEscape(serr), nil
}

// linkInside refuses a symlink at p whose target leaves the root.
func (r *Root) linkInside(p Path) error {
	if _, err := r.root.Stat(p.os()); err != nil && isEscape(err) {
		return translate(err, p)
	}
	return nil
}

// guard refuses p when it is a symlink pointing outside the root. A missing
// p is fine: the caller's own operation reports it.
func (r *Root) guard(p Path) error {
	fi, err := r.root.Lstat(p.os())
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return translate(err, p)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return r.linkInside(p)
	}
	return nil
}

// writable refuses mutations of a read-only root.
func (r *Root) writable() error {
	if r.readOnly {
		return errcode.New(errcode.ReadOnly, "the workdir is read-only")
	}
	return nil
}

// Real resolves every symlink in p within the root and returns the path it
// names. A symlink leading outside is refused. Components past the first
// missing one are kept as written.
func (r *Root) Real(p Path) (Path, error) {
	var done []string
	todo := splitRel(p.rel)
	hops := 0
	for len(todo) > 0 {
		cand := append(append([]string(nil), done...), todo[0])
		todo = todo[1:]
		fi, err := r.root.Lstat(pathOf(cand).os())
		if errors.Is(err, fs.ErrNotExist) {
			return pathOf(append(cand, todo...)), nil
		}
		if err != nil {
			return Path{}, translate(err, p)
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			done = cand
			continue
		}
		if hops++; hops > maxHops {
			return Path{}, errcode.New(errcode.PathOutsideRoot, "%q has too many levels of symlinks", p.rel)
		}
		target, err := r.root.Readlink(pathOf(cand).os())
		if err != nil {
			return Path{}, translate(err, p)
		}
		next, err := r.linkComps(done, target)
		if err != nil {
			return Path{}, errcode.New(errcode.PathOutsideRoot, "%q resolves outside the workdir", p.rel)
		}
		todo = append(next, todo...)
		done = nil
	}
	return pathOf(done), nil
}

// linkComps turns a symlink target found in directory dir into root-relative
// components, or fails if it leaves the root.
func (r *Root) linkComps(dir []string, target string) ([]string, error) {
	tp, perr := parse(target, r.flavor)
	if perr != nil {
		return nil, perr
	}
	if tp.abs {
		comps, cerr := clean(tp.comps, r.flavor)
		if cerr != nil {
			return nil, cerr
		}
		rel, ok := r.relative(tp.vol, comps)
		if !ok {
			return nil, errcode.New(errcode.PathOutsideRoot, "outside")
		}
		return rel, nil
	}
	all := append(append([]string(nil), dir...), tp.comps...)
	comps, cerr := clean(all, r.flavor)
	if cerr != nil {
		return nil, cerr
	}
	return comps, nil
}

func splitRel(rel string) []string {
	if rel == "." {
		return nil
	}
	return strings.Split(rel, "/")
}

// OpenFile opens p for reading. Only regular files are opened: FIFOs and
// devices are refused without blocking on them.
func (r *Root) OpenFile(p Path) (*os.File, fs.FileInfo, error) {
	if err := r.shield(p); err != nil {
		return nil, nil, err
	}
	return openRegular(r.root, p.os(), p)
}

// openRegular opens name below root for reading if it is a regular file;
// p names it in errors.
func openRegular(root *os.Root, name string, p Path) (*os.File, fs.FileInfo, error) {
	f, err := root.OpenFile(name, os.O_RDONLY|nonblock, 0)
	if err != nil {
		return nil, nil, translate(err, p)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, translate(err, p)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		if fi.IsDir() {
			return nil, nil, errcode.New(errcode.NotAFile, "%q is a directory", p.rel)
		}
		return nil, nil, errcode.New(errcode.NotAFile, "%q is not a regular file", p.rel)
	}
	return f, fi, nil
}

// OpenDir opens p for listing.
func (r *Root) OpenDir(p Path) (*os.File, error) {
	if err := r.shield(p); err != nil {
		return nil, err
	}
	fi, err := r.root.Stat(p.os())
	if err != nil {
		return nil, translate(err, p)
	}
	if !fi.IsDir() {
		return nil, errcode.New(errcode.NotADirectory, "%q is not a directory", p.rel)
	}
	f, err := r.root.OpenFile(p.os(), os.O_RDONLY, 0)
	return f, translate(err, p)
}

// CreateTemp creates a new private file in dir for an atomic replace.
func (r *Root) CreateTemp(dir Path) (*os.File, Path, error) {
	if err := r.writable(); err != nil {
		return nil, Path{}, err
	}
	if err := r.shield(dir); err != nil {
		return nil, Path{}, err
	}
	for range 10 {
		var b [8]byte
		rand.Read(b[:])
		tp, err := r.Join(dir, ".hostlink-tmp-"+hex.EncodeToString(b[:]))
		if err != nil {
			return nil, Path{}, err
		}
		f, err := r.root.OpenFile(tp.os(), os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, Path{}, translate(err, dir)
		}
		return f, tp, nil
	}
	return nil, Path{}, errcode.New(errcode.Internal, "could not create a temporary file")
}

// Chmod sets p's permission bits. It is used on hostlink's own temporary
// files, before they are renamed into place.
func (r *Root) Chmod(p Path, mode fs.FileMode) error {
	if err := r.writable(); err != nil {
		return err
	}
	if err := r.shield(p); err != nil {
		return err
	}
	return translate(r.root.Chmod(p.os(), mode), p)
}

// Rename moves from to to, replacing a file at to.
func (r *Root) Rename(from, to Path) error {
	if err := r.mutable(from, to); err != nil {
		return err
	}
	err := r.root.Rename(from.os(), to.os())
	if err != nil {
		if _, serr := r.root.Lstat(from.os()); serr != nil {
			return translate(serr, from)
		}
		return translate(err, to)
	}
	return nil
}

// Link makes to a new name for from; it fails if to exists, so it gives an
// atomic create-only publish of a finished temporary file.
func (r *Root) Link(from, to Path) error {
	if err := r.mutable(from, to); err != nil {
		return err
	}
	return translate(r.root.Link(from.os(), to.os()), to)
}

// Remove deletes a file, an empty directory or a symlink (not its target).
func (r *Root) Remove(p Path) error {
	if err := r.mutable(p); err != nil {
		return err
	}
	return translate(r.root.Remove(p.os()), p)
}

// RemoveAll deletes p and everything below it without following symlinks.
func (r *Root) RemoveAll(p Path) error {
	if err := r.mutable(p); err != nil {
		return err
	}
	return translate(r.root.RemoveAll(p.os()), p)
}

// Mkdir creates one directory.
func (r *Root) Mkdir(p Path) error {
	if err := r.mutable(p); err != nil {
		return err
	}
	return translate(r.root.Mkdir(p.os(), 0o755), p)
}

// MkdirAll creates p and any missing parents, all beneath the root.
func (r *Root) MkdirAll(p Path) error {
	if err := r.mutable(p); err != nil {
		return err
	}
	return translate(r.root.MkdirAll(p.os(), 0o755), p)
}

func (r *Root) mutable(ps ...Path) error {
	if err := r.writable(); err != nil {
		return err
	}
	if err := r.shield(ps...); err != nil {
		return err
	}
	for _, p := range ps {
		if p.IsRoot() {
			return errcode.New(errcode.InvalidArgument, "the workdir root itself cannot be changed")
		}
		if err := r.guard(p); err != nil {
			return err
		}
	}
	return nil
}

// FS returns a read-only file system view of the root for walking. Walking
// does not follow symlinks.
func (r *Root) FS() fs.FS {
	if len(r.protected) > 0 {
		return shieldedFS{r.root.FS(), r}
	}
	return r.root.FS()
}
