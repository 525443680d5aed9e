package jail

import (
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hostlink/hostlink/internal/errcode"
)

// protectedComps returns, for each protected directory inside the root,
// its root-relative components. Directories outside the root need nothing.
func (r *Root) protectedComps(dirs []string) [][]string {
	var out [][]string
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			continue
		}
		forms := []string{filepath.Clean(d)}
		if canon, err := filepath.EvalSymlinks(d); err == nil && canon != forms[0] {
			forms = append(forms, canon)
		}
		for _, f := range forms {
			p, err := parse(f, r.flavor)
			if err != nil {
				continue
			}
			comps, err := clean(p.comps, r.flavor)
			if err != nil {
				continue
			}
			if rel, ok := r.relative(p.vol, comps); ok {
				out = append(out, rel)
			}
		}
	}
	return out
}

// underProtected reports whether comps is a protected directory or lies
// below one.
func (r *Root) underProtected(comps []string) bool {
	for _, prot := range r.protected {
		if len(comps) < len(prot) {
			continue
		}
		if slices.EqualFunc(prot, comps[:len(prot)], func(a, b string) bool {
			return a == b || (r.fold && strings.EqualFold(a, b))
		}) {
			return true
		}
	}
	return false
}

func protectedError(p Path) error {
	return errcode.New(errcode.PathOutsideRoot, "%q is inside hostlink's own configuration or state, which no operation may read or change", p.rel)
}

// shield refuses p when it is, or resolves through symlinks to, a
// protected directory or something below one.
func (r *Root) shield(ps ...Path) error {
	if len(r.protected) == 0 {
		return nil
	}
	for _, p := range ps {
		if r.underProtected(splitRel(p.rel)) {
			return protectedError(p)
		}
		real, err := r.Real(p)
		if err != nil {
			continue // the operation reports its own error
		}
		if r.underProtected(splitRel(real.rel)) {
			return protectedError(p)
		}
	}
	return nil
}

// shieldedFS hides protected directories from walks: they are left out of
// directory listings and cannot be opened.
type shieldedFS struct {
	fs.FS
	r *Root
}

func (s shieldedFS) Open(name string) (fs.File, error) {
	if s.r.underProtected(splitRel(name)) {
		return nil, &fs.PathError{Op: "open", Path: name, Err: fs.ErrPermission}
	}
	return s.FS.Open(name)
}

func (s shieldedFS) ReadDir(name string) ([]fs.DirEntry, error) {
	if s.r.underProtected(splitRel(name)) {
		return nil, &fs.PathError{Op: "readdir", Path: name, Err: fs.ErrPermission}
	}
	ents, err := fs.ReadDir(s.FS, name)
	return slices.DeleteFunc(ents, func(e fs.DirEntry) bool {
		child := e.Name()
		if name != "." {
			child = name + "/" + child
		}
		return s.r.underProtected(splitRel(child))
	}), err
}
