package jail

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hostlink/hostlink/internal/errcode"
)

// protection is what a Root knows about hostlink's own directories.
type protection struct {
	// ids are the identities of the protected directories that existed
	// at Open. Every directory a walk opens, and every object an
	// operation acts on, is compared with them: what lies below one can
	// only be reached through it.
	ids []ident
	// names are the root-relative paths of protected directories inside
	// the root, compared with the canonical path a walk reached (never
	// with the path as written), so one created after Open is covered.
	names [][]string
	// anc are the identities of the directories inside the root that hold
	// a protected one (its parent, and so on up to the root's child).
	// They cannot be renamed or removed: moving one away and another
	// tree into its place would replace hostlink's configuration.
	anc []ident
	// sealed: the root itself is, or lies below, a protected directory.
	sealed bool
}

var (
	errProtected = errors.New("protected directory")
	// errHoldsProtected: the entry holds a protected directory.
	errHoldsProtected = errors.New("holds a protected directory")
)

// protect records dirs (absolute paths) for r, whose fd and dir are set.
func (r *Root) protect(dirs []string) {
	for _, d := range dirs {
		if !filepath.IsAbs(d) {
			continue
		}
		if id, err := identityOf(d); err == nil && !slices.Contains(r.prot.ids, id) {
			r.prot.ids = append(r.prot.ids, id)
		}
		forms := []string{filepath.Clean(d)}
		if canon := canonicalForm(d); canon != forms[0] {
			forms = append(forms, canon)
		}
		for _, f := range forms {
			p, err := parse(f, r.flavor)
			if err != nil {
				continue
			}
			comps, cerr := clean(p.comps, r.flavor)
			if cerr != nil {
				continue
			}
			if rel, ok := r.relative(p.vol, comps); ok {
				if len(rel) == 0 {
					r.prot.sealed = true
				}
				r.prot.names = append(r.prot.names, rel)
				for i := 1; i < len(rel); i++ {
					a := filepath.Join(append([]string{r.dir}, rel[:i]...)...)
					if id, err := identityOf(a); err == nil && !slices.Contains(r.prot.anc, id) {
						r.prot.anc = append(r.prot.anc, id)
					}
				}
			}
		}
	}
	if len(r.prot.ids) == 0 {
		return
	}
	for a := r.dir; ; a = filepath.Dir(a) {
		if id, err := identityOf(a); err == nil && slices.Contains(r.prot.ids, id) {
			r.prot.sealed = true
			return
		}
		if filepath.Dir(a) == a {
			return
		}
	}
}

// canonicalForm is d with the symlinks of its longest existing prefix
// resolved: where hostlink would create d if it does not exist yet.
func canonicalForm(d string) string {
	rest := ""
	for p := filepath.Clean(d); ; p = filepath.Dir(p) {
		if canon, err := filepath.EvalSymlinks(p); err == nil {
			return filepath.Join(canon, rest)
		}
		if filepath.Dir(p) == p {
			return filepath.Clean(d)
		}
		rest = filepath.Join(filepath.Base(p), rest)
	}
}

// noneBelow reports, by identity, whether no protected directory lies
// below the root: walking up from each with "..", none meets the root.
// Protected directories that do not exist are judged by their paths
// (names), which are empty here when none lies inside.
func (r *Root) noneBelow(dirs []string) bool {
	if r.prot.sealed || len(r.prot.names) > 0 || len(r.prot.anc) > 0 {
		return false
	}
	rootID, err := statHandle(r.fd, ".")
	if err != nil {
		return false
	}
	for _, d := range dirs {
		h, err := openRootDir(d)
		if err != nil {
			continue // does not exist: judged by path
		}
		below, err := r.isBelow(h, rootID.id)
		if below || err != nil {
			return false
		}
	}
	return true
}

// isBelow reports whether the directory h (which it closes) is root or
// lies below it, walking up with "..".
func (r *Root) isBelow(h handle, root ident) (bool, error) {
	defer func() { closeHandle(h) }()
	for range maxSteps {
		st, err := statHandle(h, "")
		if err != nil {
			return false, err
		}
		if st.id == root {
			return true, nil
		}
		up, err := parentOf(h)
		if err != nil {
			return false, err
		}
		closeHandle(h)
		h = up
		ust, err := statHandle(h, "")
		if err != nil {
			return false, err
		}
		if ust.id == st.id {
			return false, nil // the top of the tree
		}
	}
	return false, errTooManySteps
}

// hit reports whether the object with identity id, reached at canon, is a
// protected directory or lies below one.
func (p *protection) hit(id ident, canon []string, fold bool) bool {
	for _, x := range p.ids {
		if x == id {
			return true
		}
	}
	return p.hitName(canon, fold)
}

// hitName reports whether canon is a protected directory's path inside the
// root or lies below one.
func (p *protection) hitName(canon []string, fold bool) bool {
	for _, prot := range p.names {
		if len(canon) >= len(prot) && slices.EqualFunc(prot, canon[:len(prot)], func(a, b string) bool {
			return a == b || (fold && strings.EqualFold(a, b))
		}) {
			return true
		}
	}
	return false
}

// holds reports whether the object id, reached at canon, holds a
// protected directory (or would, by its path).
func (p *protection) holds(id ident, canon []string, fold bool) bool {
	if slices.Contains(p.anc, id) {
		return true
	}
	for _, prot := range p.names {
		if len(canon) < len(prot) && slices.EqualFunc(prot[:len(canon)], canon, func(a, b string) bool {
			return a == b || (fold && strings.EqualFold(a, b))
		}) {
			return true
		}
	}
	return false
}

func protectedError(p Path) error {
	return errcode.New(errcode.PathOutsideRoot, "%q is inside hostlink's own configuration or state, which no operation may read or change", p.rel)
}

func holdsProtectedError(p Path) error {
	return errcode.New(errcode.PathOutsideRoot, "%q holds hostlink's own configuration or state, which no operation may move or remove", p.rel)
}
