package jail

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"io/fs"
	"os"

	"github.com/hostlink/hostlink/internal/errcode"
)

// checkObj refuses the object st, reached at canon, when it is a protected
// directory or lies below one.
func (r *Root) checkObj(st objStat, canon []string) error {
	if r.prot.hit(st.id, canon, r.fold) {
		return errProtected
	}
	return nil
}

// lstatChecked describes l's object without following it. A symlink must
// lead somewhere the jail allows (a dangling link inside the root does):
// one that leaves the root or reaches a protected directory is unusable
// for every operation, its own deletion included.
func (r *Root) lstatChecked(l located) (objStat, error) {
	st, err := lstatAt(l.dir, l.name)
	if err != nil {
		return objStat{}, err
	}
	if err := r.checkObj(st, l.canon); err != nil {
		return objStat{}, err
	}
	if st.info.Mode()&fs.ModeSymlink != 0 {
		_, err := walk(r, pathOf(l.canon), walkOpts{}, func(t located) (struct{}, error) {
			st, err := lstatAt(t.dir, t.name)
			if err == nil && st.info.Mode()&fs.ModeSymlink != 0 {
				return struct{}{}, errSymlink
			}
			if err == nil {
				err = r.checkObj(st, t.canon)
			}
			return struct{}{}, err
		})
		var missing *missingError
		if err != nil && !errors.Is(err, fs.ErrNotExist) && !errors.As(err, &missing) {
			return objStat{}, err
		}
	}
	return st, nil
}

// statFollow is the final step of a walk that describes what a path names,
// following a final symlink.
func (r *Root) statFollow(l located) (objStat, error) {
	st, err := lstatAt(l.dir, l.name)
	if err != nil {
		return objStat{}, err
	}
	if st.info.Mode()&fs.ModeSymlink != 0 {
		return objStat{}, errSymlink
	}
	return st, r.checkObj(st, l.canon)
}

// Lstat describes p without following a final symlink. A symlink whose
// target is outside the root, or in a protected directory, is refused.
func (r *Root) Lstat(p Path) (fs.FileInfo, error) {
	if err := r.acquire(); err != nil {
		return nil, err
	}
	defer r.release()
	st, err := walk(r, p, walkOpts{fast: true}, r.lstatChecked)
	if err != nil {
		return nil, translate(err, p)
	}
	return st.info, nil
}

// Stat describes p, following symlinks that stay inside the root.
func (r *Root) Stat(p Path) (fs.FileInfo, error) {
	if err := r.acquire(); err != nil {
		return nil, err
	}
	defer r.release()
	st, err := walk(r, p, walkOpts{fast: true}, r.statFollow)
	if err != nil {
		return nil, translate(err, p)
	}
	return st.info, nil
}

// Canonical returns the root-relative path p names once every symlink on
// it is followed, through the same identity-checked walk every operation
// makes: what an operation on p would act on. A link leading outside the
// root or into a protected directory is refused. Components past the first
// one that does not exist are kept as written (a path to be created).
//
// Policy that matches paths (allow_paths) matches this path, not the one
// written: a planted "scratch/up -> ../src" makes scratch/up/main.go
// src/main.go here. The answer can be stale by the time the operation
// runs; the operation's own walk decides what it acts on.
func (r *Root) Canonical(p Path) (Path, error) {
	if err := r.acquire(); err != nil {
		return Path{}, err
	}
	defer r.release()
	canon, err := walk(r, p, walkOpts{}, func(l located) ([]string, error) {
		st, err := lstatAt(l.dir, l.name)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if r.prot.hitName(l.canon, r.fold) {
				return nil, errProtected
			}
			return l.canon, nil
		case err != nil:
			return nil, err
		case st.info.Mode()&fs.ModeSymlink != 0:
			return nil, errSymlink
		}
		return l.canon, r.checkObj(st, l.canon)
	})
	var missing *missingError
	if errors.As(err, &missing) {
		for _, c := range missing.rest {
			if c == ".." {
				// The kernel stops at the missing directory.
				return Path{}, translate(missing.err, p)
			}
		}
		canon, err = append(missing.canon, missing.rest...), nil
		if r.prot.hitName(canon, r.fold) {
			err = errProtected
		}
	}
	if err != nil {
		return Path{}, translate(err, p)
	}
	return pathOf(canon), nil
}

// writable refuses mutations of a read-only root.
func (r *Root) writable() error {
	if r.readOnly {
		return errcode.New(errcode.ReadOnly, "the workdir is read-only")
	}
	return nil
}

// OpenFile opens p for reading. Only regular files are opened: FIFOs,
// sockets and devices are refused without blocking on them, and so is a
// file with more than one link unless the root allows hard links.
func (r *Root) OpenFile(p Path) (*os.File, fs.FileInfo, error) {
	if err := r.acquire(); err != nil {
		return nil, nil, err
	}
	defer r.release()
	o, err := walk(r, p, walkOpts{fast: true}, r.openRead)
	if err != nil {
		return nil, nil, translate(err, p)
	}
	return o.f, o.st.info, nil
}

type opened struct {
	f  *os.File
	st objStat
}

// openRead is the final step of a walk that opens a file for reading.
func (r *Root) openRead(l located) (opened, error) {
	h, err := openFileAt(l.dir, l.name, openReadFlags, 0)
	if err != nil {
		return opened{}, openError(l.dir, l.name, pathOf(l.canon), err)
	}
	st, err := statHandle(h, l.name)
	if err == nil && st.info.Mode()&fs.ModeSymlink != 0 {
		err = errSymlink // Windows opens the link itself
	}
	if err == nil {
		err = r.checkRegular(st, l.canon, pathOf(l.canon))
	}
	if err != nil {
		closeHandle(h)
		return opened{}, err
	}
	return opened{os.NewFile(uintptr(h), l.name), st}, nil
}

// openError explains a failed open of name in dir: a socket cannot be
// opened at all (ENXIO), which is "not a regular file", not an internal
// error.
func openError(dir handle, name string, p Path, err error) error {
	if err == errSymlink {
		return err
	}
	if st, lerr := lstatAt(dir, name); lerr == nil && st.info.Mode().Type()&(fs.ModeSocket|fs.ModeDevice|fs.ModeNamedPipe|fs.ModeIrregular) != 0 {
		return errcode.New(errcode.NotAFile, "%q is not a regular file", p.rel)
	}
	return err
}

// checkRegular refuses what a read must not open.
func (r *Root) checkRegular(st objStat, canon []string, p Path) error {
	if err := r.checkObj(st, canon); err != nil {
		return err
	}
	switch {
	case st.info.IsDir():
		return errcode.New(errcode.NotAFile, "%q is a directory", p.rel)
	case !st.info.Mode().IsRegular():
		return errcode.New(errcode.NotAFile, "%q is not a regular file", p.rel)
	case st.nlink > 1 && !r.hardlinks:
		return errcode.New(HardlinkRefused, "%q has %d hard links; another may be outside the workdir (a workdir opts in with hardlinks = \"allow\")", p.rel, st.nlink).
			With("links", st.nlink)
	}
	return nil
}

// openDir is the final step of a walk that opens a directory, following a
// final symlink.
func (r *Root) openDir(l located) (dirHandle, error) {
	h, err := openDirAt(l.dir, l.name)
	if err != nil {
		return dirHandle{}, err
	}
	st, err := statHandle(h, l.name)
	if err == nil {
		err = r.checkObj(st, l.canon)
	}
	if err != nil {
		closeHandle(h)
		return dirHandle{}, err
	}
	return dirHandle{h, st, l.canon, r.changeable(l, st, true) != nil}, nil
}

// dirHandle is a directory a walk opened.
type dirHandle struct {
	h     handle
	st    objStat
	canon []string
	// guarded: it is, or lies below, a guarded path.
	guarded bool
}

// CreateTemp creates a new private file in dir for an atomic replace, and
// returns it with its path (dir's, joined with the file's name; canonical
// when dir is).
func (r *Root) CreateTemp(dir Path) (*os.File, Path, error) {
	if err := r.writable(); err != nil {
		return nil, Path{}, err
	}
	if err := r.acquire(); err != nil {
		return nil, Path{}, err
	}
	defer r.release()
	d, err := walk(r, dir, walkOpts{fast: true}, r.openDir)
	if err == nil && d.guarded {
		closeHandle(d.h)
		err = errGuarded
	}
	if err != nil {
		return nil, Path{}, translate(err, dir)
	}
	defer closeHandle(d.h)
	for range 10 {
		var b [8]byte
		rand.Read(b[:])
		name := ".hostlink-tmp-" + hex.EncodeToString(b[:])
		h, err := openFileAt(d.h, name, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
		if errors.Is(err, fs.ErrExist) {
			continue
		}
		if err != nil {
			return nil, Path{}, translate(err, dir)
		}
		return os.NewFile(uintptr(h), name), pathOf(append(d.canon, name)), nil
	}
	return nil, Path{}, errcode.New(errcode.Internal, "could not create a temporary file")
}

// At is what a checked mutation finds at the moment it acts, in the
// directory it holds open (see Check).
type At struct {
	Dir  fs.FileInfo // the directory that holds the entry
	Path Path        // the entry's path as the walk reached it: every link on the way followed
	// Entry is the entry itself (a symlink is not followed); nil when
	// there is none.
	Entry fs.FileInfo
}

// Check accepts or refuses what a checked mutation (RemoveIf, RenameIf,
// MkdirAllIf, RemoveAllIf) finds: it runs after the mutation's last look
// at the entry, in the directory handle the change is made through,
// immediately before the change. Its error is the mutation's, and nothing
// is changed.
type Check func(At) error

// mutation is the final step of a walk that changes l's entry (not what a
// symlink there points to). Neither a protected nor a guarded entry is
// changed. A checked mutation (chk set) walks component by component, so
// that At.Path is the path the kernel resolved.
func (r *Root) mutation(p Path, chk Check, do func(l located, st objStat, exists bool) error) error {
	if err := r.writable(); err != nil {
		return err
	}
	if p.IsRoot() {
		return errcode.New(errcode.InvalidArgument, "the workdir root itself cannot be changed")
	}
	if err := r.acquire(); err != nil {
		return err
	}
	defer r.release()
	_, err := walk(r, p, walkOpts{fast: chk == nil}, func(l located) (struct{}, error) {
		st, err := r.lstatChecked(l)
		exists := err == nil
		if errors.Is(err, fs.ErrNotExist) {
			if r.prot.hitName(l.canon, r.fold) {
				return struct{}{}, errProtected
			}
			err = nil
		}
		if err == nil {
			err = r.changeable(l, st, exists)
		}
		if err == nil && chk != nil {
			var entry fs.FileInfo
			if exists {
				entry = st.info
			}
			err = check(chk, l, entry)
		}
		if err != nil {
			return struct{}{}, err
		}
		return struct{}{}, do(l, st, exists)
	})
	return err
}

// Changeable reports, changing nothing, whether a mutation of the entry
// at p (not what a final symlink there points to) would be refused because
// the workdir is read-only or p is, lies below or holds one of hostlink's
// own paths: the refusal an approval gives before it asks. A path whose
// parent does not exist yet is not judged here (the mutation that creates
// the parents checks each one as it goes).
func (r *Root) Changeable(p Path) error {
	if p.IsRoot() {
		return nil
	}
	err := translate(r.mutation(p, nil, func(l located, st objStat, exists bool) error {
		if exists && r.holdsOwn(st.id, l.canon) {
			return errHoldsProtected
		}
		return nil
	}), p)
	if errcode.CodeOf(err) == errcode.PathNotFound {
		return nil
	}
	return err
}

// check runs chk on what a walk found at l.
func check(chk Check, l located, entry fs.FileInfo) error {
	dir, err := statHandle(l.dir, "")
	if err != nil {
		return err
	}
	return chk(At{Dir: dir.info, Path: pathOf(l.canon), Entry: entry})
}

// Rename moves from to to, replacing a file at to.
func (r *Root) Rename(from, to Path) error {
	return r.rename(from, to, false, nil, nil)
}

// RenameIf is Rename, or RenameNoReplace when noReplace is set, that
// first runs checkFrom on what is at from and checkTo on what is at to
// (either may be nil).
func (r *Root) RenameIf(from, to Path, noReplace bool, checkFrom, checkTo Check) error {
	return r.rename(from, to, noReplace, checkFrom, checkTo)
}

// RenameNoReplace moves from to to and fails with PATH_EXISTS if to
// exists: an atomic create-only publish of a finished temporary file.
// Where the file system has no such rename it links the new name and
// removes the old one (for that moment the file has two links).
func (r *Root) RenameNoReplace(from, to Path) error {
	return r.rename(from, to, true, nil, nil)
}

func (r *Root) rename(from, to Path, noReplace bool, checkFrom, checkTo Check) error {
	var target Path
	err := r.mutation(from, checkFrom, func(src located, st objStat, exists bool) error {
		if !exists {
			target = from
			return fs.ErrNotExist
		}
		if r.holdsOwn(st.id, src.canon) {
			target = from
			return errHoldsProtected
		}
		target = to
		want := pin(checkFrom, st)
		return r.mutation(to, checkTo, func(dst located, dstSt objStat, _ bool) error {
			if r.holdsOwn(dstSt.id, dst.canon) {
				return errHoldsProtected
			}
			if !noReplace {
				return renameAt(src.dir, src.name, dst.dir, dst.name, want)
			}
			err := renameNoReplaceAt(src.dir, src.name, dst.dir, dst.name, want)
			if err != errNoReplaceUnsupported {
				return err
			}
			if err := linkAt(src.dir, src.name, dst.dir, dst.name); err != nil {
				return err
			}
			return removeAt(src.dir, src.name, false, nil)
		})
	})
	if err == nil {
		return nil
	}
	if target == (Path{}) {
		target = from
	}
	return translate(err, target)
}

// Remove deletes a file, an empty directory or a symlink (not its target).
func (r *Root) Remove(p Path) error { return r.RemoveIf(p, nil) }

// RemoveIf is Remove that first runs chk (if set) on what is at p.
func (r *Root) RemoveIf(p Path, chk Check) error {
	return translate(r.mutation(p, chk, func(l located, st objStat, exists bool) error {
		if !exists {
			return fs.ErrNotExist
		}
		if r.holdsOwn(st.id, l.canon) {
			return errHoldsProtected
		}
		return removeAt(l.dir, l.name, st.info.IsDir(), pin(chk, st))
	}), p)
}

// pin is the identity a checked mutation's system call must still find
// where the OS acts through a handle on the entry (see removeAt): the
// entry's that chk accepted; nil for an unchecked mutation.
func pin(chk Check, st objStat) *ident {
	if chk == nil {
		return nil
	}
	return &st.id
}

// Mkdir creates one directory.
func (r *Root) Mkdir(p Path) error { return r.MkdirIf(p, nil) }

// MkdirIf is Mkdir that first runs chk (if set) on what is at p.
func (r *Root) MkdirIf(p Path, chk Check) error {
	return translate(r.mutation(p, chk, func(l located, _ objStat, exists bool) error {
		if exists {
			return fs.ErrExist
		}
		return mkdirAt(l.dir, l.name, 0o755)
	}), p)
}

// MkdirAll creates p and any missing parents, all beneath the root. It
// succeeds if p is a directory already (or a symlink to one).
func (r *Root) MkdirAll(p Path) error { return r.MkdirAllIf(p, nil) }

// MkdirAllIf is MkdirAll that runs chk (if set) on what is at p once its
// parents are there, before p is made.
func (r *Root) MkdirAllIf(p Path, chk Check) error {
	if err := r.writable(); err != nil {
		return err
	}
	if p.IsRoot() {
		return nil
	}
	if err := r.acquire(); err != nil {
		return err
	}
	defer r.release()
	_, err := walk(r, p, walkOpts{createDirs: true}, func(l located) (struct{}, error) {
		st, err := lstatAt(l.dir, l.name)
		if chk != nil && (err == nil || errors.Is(err, fs.ErrNotExist)) {
			var entry fs.FileInfo
			if err == nil {
				entry = st.info
			}
			if err := check(chk, l, entry); err != nil {
				return struct{}{}, err
			}
		}
		switch {
		case errors.Is(err, fs.ErrNotExist):
			if r.prot.hitName(l.canon, r.fold) {
				return struct{}{}, errProtected
			}
			if err := r.changeable(l, st, false); err != nil {
				return struct{}{}, err
			}
			err = mkdirAt(l.dir, l.name, 0o755)
			if !errors.Is(err, fs.ErrExist) {
				return struct{}{}, err
			}
			if st, err = lstatAt(l.dir, l.name); err != nil {
				return struct{}{}, err
			}
		case err != nil:
			return struct{}{}, err
		}
		if st.info.Mode()&fs.ModeSymlink != 0 {
			return struct{}{}, errSymlink
		}
		if err := r.checkObj(st, l.canon); err != nil {
			return struct{}{}, err
		}
		if !st.info.IsDir() {
			return struct{}{}, fs.ErrExist
		}
		return struct{}{}, nil
	})
	return translate(err, p)
}
