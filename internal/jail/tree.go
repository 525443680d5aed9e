package jail

import (
	"errors"
	"io/fs"
	"strings"

	"github.com/hostlink/hostlink/internal/errcode"
)

// WalkDir walks the tree at start as fs.WalkDir walks a file system: fn is
// called for start, then for every entry below it, depth first, names
// sorted bytewise in each directory; fs.SkipDir and fs.SkipAll work as
// there. Each directory is opened below its parent's handle, never through
// a symlink, and compared by identity with the protected directories,
// which are left out. A directory on another file system than start's is
// reported but not entered unless the root allows crossing mounts: fn is
// called for it a second time with a MOUNT_CROSSING error, as fs.WalkDir
// does for a directory it cannot read.
//
// The DirEntry's Info is valid during fn's call for that entry only.
func (r *Root) WalkDir(start Path, fn fs.WalkDirFunc) error {
	if err := r.acquire(); err != nil {
		return err
	}
	defer r.release()
	d, err := walk(r, start, walkOpts{fast: true}, r.openDir)
	if err != nil {
		err = fn(start.rel, nil, translate(err, start))
		return skipped(err)
	}
	defer closeHandle(d.h)
	top := &dirEntry{name: d.st.info.Name(), typ: fs.ModeDir, st: &d.st}
	if err := fn(start.rel, top, nil); err != nil {
		return skipped(err)
	}
	mnt, err := mountOf(d.h)
	if err != nil {
		return translate(err, start)
	}
	w := &treeWalker{r: r, fn: fn, mnt: mnt}
	return skipped(w.walk(start.rel, d.canon, d.h))
}

func skipped(err error) error {
	if err == fs.SkipDir || err == fs.SkipAll {
		return nil
	}
	return err
}

type treeWalker struct {
	r   *Root
	fn  fs.WalkDirFunc
	mnt uint64 // the mount the walk stays on (mountOf)
}

// walk visits the entries of the directory h at rel (canon: its canonical
// path, for the protected names).
func (w *treeWalker) walk(rel string, canon []string, h handle) error {
	ents, err := readDirAt(h, w.r.Abs(Path{rel}))
	if err != nil {
		if err := w.fn(rel, &dirEntry{name: baseOf(rel), typ: fs.ModeDir}, translate(err, Path{rel})); err != nil {
			if err == fs.SkipDir {
				return nil
			}
			return err
		}
	}
	here := &dirState{h: h}
	defer func() { here.left = true }()
	for _, e := range ents {
		name := e.Name()
		child := joinRel(rel, name)
		childCanon := append(canon[:len(canon):len(canon)], name)
		de := &dirEntry{name: name, typ: e.Type(), os: e, in: here}
		if e.IsDir() {
			st, err := lstatAt(h, name)
			if err != nil {
				continue // gone since the listing
			}
			if w.r.prot.hit(st.id, childCanon, w.r.fold) {
				continue // protected directories are not shown
			}
			de.st = &st
		}
		err := w.fn(child, de, nil)
		switch {
		case err == fs.SkipDir && e.IsDir():
			continue
		case err == fs.SkipDir:
			return nil // the rest of this directory
		case err != nil:
			return err
		case !e.IsDir():
			continue
		}
		sub, err := w.enter(h, name, childCanon, *de.st)
		if err != nil {
			if err := w.fn(child, de, translate(err, Path{child})); err != nil && err != fs.SkipDir {
				return err
			}
			continue
		}
		err = w.walk(child, childCanon, sub)
		closeHandle(sub)
		if err != nil {
			return err
		}
	}
	return nil
}

// enter opens the directory name of h that was listed with identity want,
// refusing a symlink swapped in since, a protected directory and another
// file system.
func (w *treeWalker) enter(h handle, name string, canon []string, want objStat) (handle, error) {
	sub, err := openDirAt(h, name)
	if err != nil {
		if err == errSymlink {
			err = errEscape
		}
		return 0, err
	}
	st, err := statHandle(sub, name)
	var mnt uint64
	if err == nil && !w.r.crossMounts {
		mnt, err = mountOf(sub)
	}
	switch {
	case err != nil:
	case st.id != want.id:
		err = errcode.New(errcode.Conflict, "%q changed while it was being walked", pathOf(canon).rel)
	case w.r.prot.hit(st.id, canon, w.r.fold):
		err = errProtected
	case !w.r.crossMounts && mnt != w.mnt:
		err = mountError(pathOf(canon))
	}
	if err != nil {
		closeHandle(sub)
		return 0, err
	}
	return sub, nil
}

func mountError(p Path) error {
	return errcode.New(MountCrossing, "%q is the mount point of another file system, which recursive operations do not enter (a workdir opts in with cross_mounts = true)", p.rel).
		With("mount", p.rel)
}

// dirState tells a walk's entries whether the walk is still in their
// directory, whose handle their Info uses.
type dirState struct {
	h    handle
	left bool
}

// dirEntry is an entry of a walked directory.
type dirEntry struct {
	name string
	typ  fs.FileMode
	os   fs.DirEntry // as listed; nil for the walk's start
	in   *dirState
	st   *objStat // known already (directories)
}

func (e *dirEntry) Name() string               { return e.name }
func (e *dirEntry) IsDir() bool                { return e.typ.IsDir() }
func (e *dirEntry) Type() fs.FileMode          { return e.typ.Type() }
func (e *dirEntry) String() string             { return fs.FormatDirEntry(e) }
func (e *dirEntry) Info() (fs.FileInfo, error) { return e.info() }

func (e *dirEntry) info() (fs.FileInfo, error) {
	if e.st != nil {
		return e.st.info, nil
	}
	if e.in == nil || e.in.left {
		return nil, errors.New("jail: DirEntry.Info called after its walk left the directory")
	}
	return entryInfo(e.in.h, e.os)
}

func joinRel(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}

func baseOf(rel string) string { return Path{rel}.Base() }

// RemoveAll deletes p and everything below it without following symlinks.
// Nothing is deleted if the tree holds a protected directory, or (unless
// the root allows crossing mounts) a directory on another file system
// than p's parent: the error names it.
func (r *Root) RemoveAll(p Path) error { return r.RemoveAllIf(p, nil, nil) }

// RemoveAllIf is RemoveAll that first runs chk (if set) on what is at p
// and, when keep is set, deletes only entries keep accepts: keep is asked
// about every entry below p (rel is its path below p, '/'-separated; fi
// describes it, not followed) once before anything is deleted, and again
// as each is deleted. An entry it refuses stops the delete with CONFLICT:
// before anything is deleted when it was there at the first pass.
func (r *Root) RemoveAllIf(p Path, chk Check, keep func(rel string, fi fs.FileInfo) bool) error {
	return translate(r.mutation(p, chk, func(l located, st objStat, exists bool) error {
		switch {
		case !exists:
			return nil
		case r.holdsOwn(st.id, l.canon):
			return errHoldsProtected
		case !st.info.IsDir():
			return removeAt(l.dir, l.name, false, pin(chk, st))
		}
		mnt, err := mountOf(l.dir)
		if err != nil {
			return err
		}
		t := &treeWalker{r: r, mnt: mnt}
		h, err := t.enter(l.dir, l.name, l.canon, st)
		if err != nil {
			return err
		}
		defer closeHandle(h)
		var k *keeper
		if keep != nil {
			k = &keeper{keep: keep, top: len(l.canon)}
		}
		if err := t.check(h, l.canon, k); err != nil {
			return err
		}
		if err := t.remove(h, l.canon, k); err != nil {
			return err
		}
		return removeAt(l.dir, l.name, true, pin(chk, st))
	}), p)
}

// keeper asks RemoveAllIf's keep about the entries of a tree whose top is
// top components deep.
type keeper struct {
	keep func(rel string, fi fs.FileInfo) bool
	top  int
}

// ask describes name in the directory h (at canon) and asks keep about
// it, returning the identity it was asked about (nil: k is nil, or the
// entry is gone since the listing, which is nothing to ask about).
func (k *keeper) ask(h handle, name string, canon []string) (*ident, error) {
	if k == nil {
		return nil, nil
	}
	st, err := lstatAt(h, name)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	rel := strings.Join(append(canon[k.top:len(canon):len(canon)], name), "/")
	if !k.keep(rel, st.info) {
		return nil, errcode.New(errcode.Conflict, "%q changed since it was shown", pathOf(append(canon[:len(canon):len(canon)], name)).rel)
	}
	return &st.id, nil
}

// check refuses a tree holding a protected directory or a mount, or an
// entry k does not keep, before RemoveAll deletes anything.
func (t *treeWalker) check(h handle, canon []string, k *keeper) error {
	if k != nil {
		ents, err := readDirAt(h, t.r.Abs(pathOf(canon)))
		if err != nil {
			return err
		}
		for _, e := range ents {
			if _, err := k.ask(h, e.Name(), canon); err != nil {
				return err
			}
		}
	}
	return t.eachDir(h, canon, func(sub handle, subCanon []string) error {
		return t.check(sub, subCanon, k)
	})
}

// remove deletes everything in the directory h, each entry once k keeps
// it.
func (t *treeWalker) remove(h handle, canon []string, k *keeper) error {
	ents, err := readDirAt(h, t.r.Abs(pathOf(canon)))
	if err != nil {
		return err
	}
	for _, e := range ents {
		if e.IsDir() {
			continue
		}
		want, err := k.ask(h, e.Name(), canon)
		if err != nil {
			return err
		}
		if err := removeAt(h, e.Name(), false, want); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return t.eachDir(h, canon, func(sub handle, subCanon []string) error {
		name := subCanon[len(subCanon)-1]
		want, err := k.ask(h, name, canon)
		if err != nil {
			return err
		}
		if err := t.remove(sub, subCanon, k); err != nil {
			return err
		}
		err = removeAt(h, name, true, want)
		if errors.Is(err, fs.ErrNotExist) {
			err = nil
		}
		return err
	})
}

// eachDir calls f with each subdirectory of h, entered as a walk enters
// it.
func (t *treeWalker) eachDir(h handle, canon []string, f func(sub handle, subCanon []string) error) error {
	ents, err := readDirAt(h, t.r.Abs(pathOf(canon)))
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !e.IsDir() {
			continue
		}
		name := e.Name()
		st, err := lstatAt(h, name)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return err
		}
		if st.info.Mode()&fs.ModeSymlink != 0 || !st.info.IsDir() {
			continue // replaced since the listing: removed as a file
		}
		subCanon := append(canon[:len(canon):len(canon)], name)
		sub, err := t.enter(h, name, subCanon, st)
		if err != nil {
			return err
		}
		err = f(sub, subCanon)
		closeHandle(sub)
		if err != nil {
			return err
		}
	}
	return nil
}
