package jail

import (
	"io/fs"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"syscall"
	"unicode/utf16"

	"github.com/hostlink/hostlink/internal/errcode"
)

// Root is one directory that file operations are confined to.
// It is safe for concurrent use.
type Root struct {
	dir      string     // canonical absolute path (symlinks resolved)
	accepted [][]string // absolute forms (canonical and as configured) callers may use, parsed
	vols     []string   // volume of each accepted form
	fd       handle     // the root directory, held open
	dev      uint64     // the root's file system (device, or volume serial)
	flavor   Flavor
	fold     bool // names compare case-insensitively on this volume
	readOnly bool
	// hardlinks: files with more than one link may be opened.
	hardlinks bool
	// crossMounts: recursive walks and deletes may enter other file systems.
	crossMounts bool
	// fast: no protected directory lies below the root (by identity, at
	// Open), so walks may resolve a path's directories in one call where
	// the OS can (walkOpts.fast).
	fast  bool
	goos  string
	prot  protection // Options.Protected
	guard protection // Options.Guarded

	mu     sync.Mutex
	refs   int  // operations using fd
	closed bool // fd is closed once refs is 0
}

// Options configure Open.
type Options struct {
	// ReadOnly makes every mutation fail with READ_ONLY.
	ReadOnly bool
	// Protected are absolute directories (hostlink's configuration and
	// state) that no operation may reach, whatever path or link leads to
	// them (bind mounts included), and that walks do not see.
	Protected []string
	// Guarded are absolute paths (hostlink's program, its autostart unit,
	// its shell completions) that operations may read but not change,
	// replace, move or remove, nor create where they do not exist yet;
	// nor may the directories that hold them be moved or removed.
	Guarded []string
	// Hardlinks allows opening regular files with more than one link for
	// reading and editing (trees such as pnpm stores). By default they
	// are refused with HARDLINK_REFUSED: another name of the file may lie
	// outside the root.
	Hardlinks bool
	// CrossMounts lets recursive walks (listings, find, search) descend
	// into, and recursive deletes remove, directories on another file
	// system than the one where they start.
	CrossMounts bool
}

// Open opens dir as a Root. dir must be an absolute path to an existing
// directory; its canonical form (symlinks resolved) becomes the boundary.
func Open(dir string, opts Options) (*Root, error) {
	if !filepath.IsAbs(dir) {
		return nil, errcode.New(errcode.InvalidArgument, "workdir path must be absolute")
	}
	canon, err := filepath.EvalSymlinks(dir)
	if err != nil {
		return nil, err
	}
	canon, err = filepath.Abs(canon)
	if err != nil {
		return nil, err
	}
	fd, err := openRootDir(canon)
	if err != nil {
		return nil, &fs.PathError{Op: "open", Path: canon, Err: err}
	}
	st, err := statHandle(fd, filepath.Base(canon))
	if err == nil && !st.info.IsDir() {
		err = syscall.ENOTDIR
	}
	if err != nil {
		closeHandle(fd)
		return nil, &fs.PathError{Op: "open", Path: canon, Err: err}
	}
	r := &Root{
		dir:         canon,
		fd:          fd,
		dev:         st.id.dev,
		flavor:      HostFlavor(),
		readOnly:    opts.ReadOnly,
		hardlinks:   opts.Hardlinks,
		crossMounts: opts.CrossMounts,
		goos:        runtime.GOOS,
	}
	r.fold = probeCaseInsensitive(canon, !opts.ReadOnly)
	for _, form := range []string{canon, filepath.Clean(dir)} {
		p, perr := parse(form, r.flavor)
		if perr != nil {
			continue
		}
		comps, cerr := clean(p.comps, r.flavor)
		if cerr != nil {
			continue
		}
		r.accepted = append(r.accepted, comps)
		r.vols = append(r.vols, p.vol)
	}
	if len(r.accepted) == 0 {
		closeHandle(fd)
		return nil, errcode.New(errcode.InvalidArgument, "workdir path is not a valid path on this OS")
	}
	r.prot = r.protection(opts.Protected)
	r.guard = r.protection(opts.Guarded)
	if h, err := openBeneath(fd, "."); err == nil {
		closeHandle(h)
		r.fast = r.noneBelow(append(slices.Clone(opts.Protected), opts.Guarded...))
	}
	return r, nil
}

// Close releases the root's directory handle once operations using it
// are done; operations started after Close fail.
func (r *Root) Close() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if !r.closed && r.refs == 0 {
		closeHandle(r.fd)
	}
	r.closed = true
	return nil
}

// acquire keeps the root's handle open for one operation; release ends it.
func (r *Root) acquire() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.closed {
		return errcode.New(errcode.UnknownWorkdir, "the workdir was closed")
	}
	r.refs++
	return nil
}

func (r *Root) release() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.refs--; r.closed && r.refs == 0 {
		closeHandle(r.fd)
	}
}

// Dir is the canonical absolute directory of the root.
func (r *Root) Dir() string { return r.dir }

// ReadOnly reports whether mutations are refused.
func (r *Root) ReadOnly() bool { return r.readOnly }

// CaseInsensitive reports whether the root's volume compares names without case.
func (r *Root) CaseInsensitive() bool { return r.fold }

// Path is a path inside a Root: root-relative, cleaned, '/'-separated, "."
// for the root itself. A Path can only be made by Resolve or Join, so every
// Path has passed the lexical checks.
type Path struct{ rel string }

// String returns the root-relative form with '/' separators.
func (p Path) String() string { return p.rel }

// IsRoot reports whether p is the root directory itself.
func (p Path) IsRoot() bool { return p.rel == "." }

// Base returns the last component ("." for the root).
func (p Path) Base() string {
	if i := strings.LastIndexByte(p.rel, '/'); i >= 0 {
		return p.rel[i+1:]
	}
	return p.rel
}

// Parent returns the containing directory (the root's parent is the root).
func (p Path) Parent() Path {
	if i := strings.LastIndexByte(p.rel, '/'); i >= 0 {
		return Path{p.rel[:i]}
	}
	return Path{"."}
}

func pathOf(comps []string) Path {
	if len(comps) == 0 {
		return Path{"."}
	}
	return Path{strings.Join(comps, "/")}
}

// maxInput bounds the text Resolve will look at: four bytes for each of the
// longest path's UTF-16 units, room enough for any path that can name a file.
const maxInput = 4 * 32767

// Resolve checks p lexically and returns it as a Path in r. p may be relative
// to the root or absolute inside it (in its canonical or configured form,
// compared without case on a case-insensitive volume). Resolve does not touch
// the file system.
func (r *Root) Resolve(p string) (Path, error) {
	if p == "" {
		return Path{}, errcode.New(errcode.InvalidArgument, "path is empty")
	}
	if len(p) > maxInput {
		return Path{}, errcode.New(PathTooLong, "path is longer than %d bytes", maxInput)
	}
	pp, err := parse(p, r.flavor)
	if err != nil {
		return Path{}, err
	}
	comps, err := clean(pp.comps, r.flavor)
	if err != nil {
		return Path{}, err
	}
	if pp.abs {
		rel, ok := r.relative(pp.vol, comps)
		if !ok {
			return Path{}, errcode.New(errcode.PathOutsideRoot, "path is outside the workdir")
		}
		comps = rel
	}
	if err := r.checkLength(comps); err != nil {
		return Path{}, err
	}
	if r.prot.hitName(comps, r.fold) {
		return Path{}, protectedError(pathOf(comps))
	}
	return pathOf(comps), nil
}

// relative strips an accepted root prefix from an absolute path, comparing
// components with the volume's case rules and on a component boundary (so
// /root2 is never inside /root).
func (r *Root) relative(vol string, comps []string) ([]string, bool) {
	for i, base := range r.accepted {
		if r.flavor == Windows {
			if vol == "" {
				vol = r.vols[i]
			}
			if !strings.EqualFold(vol, r.vols[i]) {
				continue
			}
		}
		if len(comps) < len(base) {
			continue
		}
		match := true
		for j, c := range base {
			if c != comps[j] && !(r.fold && strings.EqualFold(c, comps[j])) {
				match = false
				break
			}
		}
		if match {
			return comps[len(base):], true
		}
	}
	return nil, false
}

func (r *Root) checkLength(comps []string) *errcode.Error {
	size := func(s string) int { return len(s) }
	if r.flavor == Windows {
		size = func(s string) int { return len(utf16.Encode([]rune(s))) }
	}
	n := size(r.dir)
	for _, c := range comps {
		n += 1 + size(c)
	}
	if n > maxPathFor(r.goos) {
		return errcode.New(PathTooLong, "path is longer than this OS allows")
	}
	return nil
}

// Join returns dir/name after checking name as a single component.
func (r *Root) Join(dir Path, name string) (Path, error) {
	if name == "" || name == "." || name == ".." || strings.ContainsAny(name, `/`) ||
		(r.flavor == Windows && strings.ContainsRune(name, '\\')) {
		return Path{}, errcode.New(errcode.InvalidArgument, "not a single path component")
	}
	if err := checkName(name, r.flavor); err != nil {
		return Path{}, err
	}
	if dir.IsRoot() {
		return Path{name}, nil
	}
	return Path{dir.rel + "/" + name}, nil
}

// Abs returns the absolute host path of p, for display to the local user.
func (r *Root) Abs(p Path) string { return filepath.Join(r.dir, filepath.FromSlash(p.rel)) }
