package jail

import (
	"errors"
	"io/fs"
	"runtime"
	"strings"
	"syscall"
)

// maxHops bounds the symlinks one resolution follows, as the kernel's ELOOP
// does.
const maxHops = 40

// maxSteps bounds the components one resolution opens. A ".." restarts the
// walk from the root (see walk), so a link target made of many "x/.." pairs
// could otherwise cost a walk of the whole path for each.
const maxSteps = 4096

// lexicalLinks: on Windows a path is cleaned lexically before it is opened,
// and a symlink's target is joined to the rest of the path the same way, so
// "s\..\x" is "x" whatever s is. On Unix the kernel expands s first and ".."
// leaves what s resolved to.
var lexicalLinks = runtime.GOOS == "windows"

// located is where a walk ends: the open directory holding the last
// component, that component's name, and the object's canonical path.
type located struct {
	dir  handle
	name string // "." when the path is the root itself
	// canon is the root-relative path of the object as the walk reached
	// it: every directory in it was opened (not a symlink), so it is the
	// path the kernel resolved, not the one that was written. nil for the
	// root.
	canon []string
	// guarded: a directory the walk opened on the way is one of the
	// guarded paths (by identity or canonical path), so the object lies
	// below it.
	guarded bool
}

// walkOpts change how a walk treats the directories on the way.
type walkOpts struct {
	// createDirs creates missing directories on the way (MkdirAll).
	createDirs bool
	// fast allows the single-call resolution of the parent directory
	// (see Root.fast): final then gets the path's components as written
	// for canon, which is the canonical path only if nothing on the way
	// was a symlink. Operations that report or act by canon do not ask
	// for it.
	fast bool
}

// missingError reports a directory on the way that does not exist, with
// the canonical path up to it and what was left to resolve.
type missingError struct {
	err   error
	canon []string // up to and including the missing component
	rest  []string // the components after it, as written
}

func (e *missingError) Error() string { return e.err.Error() }
func (e *missingError) Unwrap() error { return e.err }

var (
	// errSymlink: the component is a symlink, to be read and followed.
	errSymlink = errors.New("symlink")
	// errEscape: a path or symlink leads outside the root.
	errEscape = errors.New("path escapes from the workdir")
	// errTooManySteps: see maxSteps.
	errTooManySteps = errors.New("path needs too many steps to resolve")
	// errNoReplaceUnsupported: the file system has no rename that refuses
	// to replace.
	errNoReplaceUnsupported = errors.New("rename without replace is not supported")
	// errChanged: the handle a checked mutation acts through is open on
	// another object than the one its check accepted.
	errChanged = errors.New("changed since it was checked")
)

// walk resolves p beneath r exactly as the kernel would open it (symlinks
// expanded where they occur, ".." applied to what was resolved) while
// holding each directory open, and calls final with the directory that
// holds the last component. Every directory opened on the way is compared,
// by identity, with the protected directories (and by its canonical path
// with those that did not exist at Open) before anything below it is
// touched; final checks the object it acts on (checkObj).
//
// final returns errSymlink when the last component is a symlink it wants
// followed: walk reads the link and goes on, calling final again for the
// target. The caller must hold r (acquire).
func walk[T any](r *Root, p Path, o walkOpts, final func(l located) (T, error)) (ret T, err error) {
	if r.prot.sealed {
		return ret, protectedError(p)
	}
	if o.fast && r.fast && strings.Contains(p.rel, "/") {
		// No protected directory lies below the root (checked by identity
		// at Open), so a resolution that stays beneath it and on its
		// mount cannot pass through one: the kernel walks the parent in
		// one call. A mount on the way (EXDEV), a link out, a loop or a
		// final symlink go through the full walk, which decides. (A name
		// in the root needs no walk at all: the walk below starts there.)
		if dir, err := openBeneath(r.fd, p.Parent().rel); err == nil {
			ret, err = final(located{dir: dir, name: p.Base(), canon: splitRel(p.rel)})
			closeHandle(dir)
			if err != errSymlink {
				return ret, err
			}
		} else if errors.Is(err, fs.ErrNotExist) || err == syscall.ENOTDIR {
			return ret, err
		}
	}
	todo := splitRel(p.rel)
	var canon []string
	guarded := false
	dir := r.fd
	defer func() {
		if dir != r.fd {
			closeHandle(dir)
		}
	}()
	restart := func(parts []string) {
		if dir != r.fd {
			closeHandle(dir)
		}
		dir, canon, todo, guarded = r.fd, nil, parts, false
	}
	hops, steps := 0, 0
	mustDir := false
	for {
		if steps++; steps > maxSteps {
			return ret, errTooManySteps
		}
		if len(todo) == 0 {
			if len(canon) == 0 {
				return final(located{dir: r.fd, name: "."})
			}
			// The path ended on the directory we hold ("." or ".." at
			// the end of a link): reach it again as parent and name.
			restart(canon)
			continue
		}
		c := todo[0]
		if c == ".." {
			if len(canon) == 0 {
				return ret, errEscape
			}
			restart(append(canon[:len(canon)-1:len(canon)-1], todo[1:]...))
			continue
		}
		var next handle
		if len(todo) > 1 {
			next, err = openDirAt(dir, c)
			if err != nil && o.createDirs && errors.Is(err, fs.ErrNotExist) {
				if r.prot.hitName(append(canon, c), r.fold) {
					return ret, errProtected
				}
				if guarded || r.guard.hitName(append(canon, c), r.fold) {
					return ret, errGuarded
				}
				if err = mkdirAt(dir, c, 0o755); err == nil || errors.Is(err, fs.ErrExist) {
					next, err = openDirAt(dir, c)
				}
			}
		} else {
			err = nil
			if mustDir {
				// A link whose target ends in "/" names a directory: a
				// symlink there is followed, anything else refused.
				if st, serr := lstatAt(dir, c); serr == nil {
					switch {
					case st.info.Mode()&fs.ModeSymlink != 0:
						err = errSymlink
					case !st.info.IsDir():
						return ret, syscall.ENOTDIR
					}
				}
			}
			if err == nil {
				ret, err = final(located{dir: dir, name: c, canon: append(canon[:len(canon):len(canon)], c), guarded: guarded})
				if err != errSymlink {
					return ret, err
				}
			}
		}
		switch {
		case err == errSymlink:
			if hops++; hops > maxHops {
				return ret, syscall.ELOOP
			}
			target, err := readlinkAt(dir, c)
			if err != nil {
				return ret, err
			}
			parts, slash, err := linkParts(target, r.flavor)
			if err != nil {
				return ret, err
			}
			if slash && len(todo) == 1 {
				mustDir = true
			}
			if lexicalLinks {
				all, cerr := clean(append(append(append([]string(nil), canon...), parts...), todo[1:]...), r.flavor)
				if cerr != nil {
					return ret, errEscape
				}
				restart(all)
				continue
			}
			todo = append(parts, todo[1:]...)
			continue
		case err != nil:
			if errors.Is(err, fs.ErrNotExist) {
				return ret, &missingError{err: err, canon: append(canon[:len(canon):len(canon)], c), rest: todo[1:]}
			}
			return ret, err
		}
		st, err := statHandle(next, c)
		if err != nil {
			closeHandle(next)
			return ret, err
		}
		canon = append(canon, c)
		if r.prot.hit(st.id, canon, r.fold) {
			closeHandle(next)
			return ret, errProtected
		}
		guarded = guarded || r.guard.hit(st.id, canon, r.fold)
		if dir != r.fd {
			closeHandle(dir)
		}
		dir, todo = next, todo[1:]
	}
}

// linkParts splits a symlink's target into components ("." dropped, ".."
// kept) and reports whether it ends in a separator. An absolute target
// leaves the root: the jail follows links the way openat2's
// RESOLVE_BENEATH does, so even one pointing back inside is refused. The
// names in a target are followed as they are, as the kernel follows them.
func linkParts(target string, f Flavor) (parts []string, slash bool, err error) {
	if target == "" {
		return nil, false, syscall.ENOENT
	}
	pp, perr := parse(target, f)
	if perr != nil || pp.abs {
		return nil, false, errEscape
	}
	t := target
	if f == Windows {
		t = strings.ReplaceAll(t, `\`, "/")
	}
	slash = strings.HasSuffix(t, "/") || t == "." || strings.HasSuffix(t, "/.")
	return pp.comps, slash, nil
}

func splitRel(rel string) []string {
	if rel == "." || rel == "" {
		return nil
	}
	return strings.Split(rel, "/")
}
