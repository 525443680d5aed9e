package jail

import (
	"errors"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hostlink/hostlink/internal/errcode"
)

// protection is what a Root knows about one kind of hostlink's own paths:
// its directories (Options.Protected) or its program files
// (Options.Guarded).
type protection struct {
	// ids are the identities of the protected paths that existed at
	// Open, and idPaths those paths. Every directory a walk opens, and
	// every object an operation acts on, is compared with them: what lies
	// below one can only be reached through it. An identity counts only
	// while its path still has it (isID): a file replaced since Open (a
	// config saved atomically, an updated program) frees its old inode
	// number for any new file.
	ids     []ident
	idPaths []string
	// names are the root-relative paths of protected paths inside the
	// root, compared with the canonical path a walk reached (never with
	// the path as written), so one created after Open is covered.
	names [][]string
	// anc are the identities of the directories inside the root that hold
	// a protected path (its parent, and so on up to the root's child).
	// They cannot be renamed or removed: moving one away and another
	// tree into its place would replace hostlink's configuration or
	// program.
	anc []ident
	// sealed: the root itself is, or lies below, a protected path.
	sealed bool
}

var (
	errProtected = errors.New("protected directory")
	// errGuarded: the object is, or lies below, a guarded path.
	errGuarded = errors.New("guarded file")
	// errHoldsProtected: the entry holds a protected or guarded path.
	errHoldsProtected = errors.New("holds a protected path")
)

// protection returns what r, whose fd and dir are set, must know about
// paths (absolute).
func (r *Root) protection(paths []string) protection {
	var prot protection
	for _, d := range paths {
		if !filepath.IsAbs(d) {
			continue
		}
		if id, err := identityOf(d); err == nil && !slices.Contains(prot.ids, id) {
			prot.ids = append(prot.ids, id)
			prot.idPaths = append(prot.idPaths, d)
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
					prot.sealed = true
				}
				prot.names = append(prot.names, rel)
				for i := 1; i < len(rel); i++ {
					a := filepath.Join(append([]string{r.dir}, rel[:i]...)...)
					if id, err := identityOf(a); err == nil && !slices.Contains(prot.anc, id) {
						prot.anc = append(prot.anc, id)
					}
				}
			}
		}
	}
	if len(prot.ids) == 0 {
		return prot
	}
	for a := r.dir; ; a = filepath.Dir(a) {
		if id, err := identityOf(a); err == nil && prot.isID(id) {
			prot.sealed = true
			return prot
		}
		if filepath.Dir(a) == a {
			return prot
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

// noneBelow reports, by identity, whether no protected or guarded
// directory lies below the root: walking up from each with "..", none
// meets the root. Those that do not exist are judged by their paths
// (names), which are empty here when none lies inside.
func (r *Root) noneBelow(dirs []string) bool {
	for _, p := range []*protection{&r.prot, &r.guard} {
		if p.sealed || len(p.names) > 0 || len(p.anc) > 0 {
			return false
		}
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
// protected path or lies below one.
func (p *protection) hit(id ident, canon []string, fold bool) bool {
	return p.isID(id) || p.hitName(canon, fold)
}

// isID reports whether id is the identity of a protected path now: it was
// at Open, and the path still has it.
func (p *protection) isID(id ident) bool {
	for i, x := range p.ids {
		if x == id {
			if now, err := identityOf(p.idPaths[i]); err == nil && now == id {
				return true
			}
		}
	}
	return false
}

// hitName reports whether canon is a protected path inside the root or
// lies below one.
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
// protected path (or would, by its path).
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

// holdsOwn reports whether the object id, reached at canon, holds one of
// hostlink's protected or guarded paths.
func (r *Root) holdsOwn(id ident, canon []string) bool {
	return r.prot.holds(id, canon, r.fold) || r.guard.holds(id, canon, r.fold)
}

// changeable refuses to change the object at l (st, if it exists) when it
// is, or lies below, one of hostlink's guarded paths: by identity, by the
// canonical path, or because a directory the walk passed is one.
func (r *Root) changeable(l located, st objStat, exists bool) error {
	if r.guard.sealed || l.guarded || r.guard.hitName(l.canon, r.fold) || (exists && r.guard.isID(st.id)) {
		return errGuarded
	}
	return nil
}

func protectedError(p Path) error {
	return errcode.New(errcode.PathOutsideRoot, "%q is inside hostlink's own configuration or state, which no operation may read or change", p.rel)
}

func guardedError(p Path) error {
	return errcode.New(errcode.ReadOnly, "%q is hostlink's own program, autostart entry or shell completion: operations may read it, never change, replace, move or remove it", p.rel)
}

func holdsProtectedError(p Path) error {
	return errcode.New(errcode.PathOutsideRoot, "%q holds hostlink's own configuration, state or program, which no operation may move or remove", p.rel)
}
