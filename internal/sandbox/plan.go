package sandbox

import (
	"cmp"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/sandbox/pathtree"
)

// CodeFailed: the sandbox could not be set up for a command, so the
// command did not run.
const CodeFailed errcode.Code = "SANDBOX_FAILED"

// plan is a Policy with its paths resolved: absolute, clean, and free of
// symbolic links, so that the rules name the places themselves.
type plan struct {
	workdir   string
	writable  []string
	readOnly  []string
	hidden    []string
	protected []string
	guarded   []string
	network   bool
}

func (p Policy) plan() (plan, error) {
	if !filepath.IsAbs(p.Workdir) {
		return plan{}, errcode.New(errcode.InvalidArgument, "sandbox: the workdir must be an absolute path")
	}
	r := newResolver()
	wd, err := r.eval(p.Workdir)
	if err != nil {
		return plan{}, errcode.New(CodeFailed, "sandbox: the workdir %s cannot be resolved", p.Workdir)
	}
	pl := plan{workdir: wd, network: p.Network}
	for _, w := range p.Writable {
		// A writable path that does not exist (yet) has nothing to grant.
		if w, err := r.eval(w); err == nil {
			pl.writable = append(pl.writable, w)
		}
	}
	for _, ro := range p.ReadOnly {
		if ro, err := r.eval(ro); err == nil {
			pl.readOnly = append(pl.readOnly, ro)
		}
	}
	pl.hidden = r.all(p.Hidden)
	pl.protected = r.all(p.Protected)
	pl.guarded = r.all(p.Guarded)
	for _, root := range append([]string{wd}, pl.writable...) {
		if h := pathtree.WithinAny(root, pl.protected); h != "" {
			return plan{}, errcode.New(CodeFailed, "sandbox: %s lies inside %s, hostlink's own directory, which commands may not see", root, h)
		}
		if h := pathtree.WithinAny(root, pl.guarded); h != "" {
			return plan{}, errcode.New(CodeFailed, "sandbox: %s lies inside %s, hostlink's own program files, which commands may not change", root, h)
		}
		if h := pathtree.WithinAny(root, pl.hidden); h != "" {
			return plan{}, errcode.New(CodeFailed, "sandbox: %s lies inside %s, which [commands] hidden hides from commands", root, h)
		}
	}
	return pl, nil
}

// holders returns the directories strictly inside one of roots that hold
// one of paths (all clean and absolute), outermost first: moving one away
// and another into its place would replace what it holds.
func holders(paths, roots []string) []string {
	var out []string
	for _, p := range paths {
		for a := filepath.Dir(p); a != filepath.Dir(a); a = filepath.Dir(a) {
			if r := pathtree.WithinAny(a, roots); r != "" && !pathtree.Within(r, a) {
				out = append(out, a)
			}
		}
	}
	slices.SortFunc(out, func(a, b string) int { return cmp.Or(cmp.Compare(len(a), len(b)), strings.Compare(a, b)) })
	return slices.Compact(out)
}

// newTmp creates a command's private temporary directory below root,
// the directory that holds them all, creating root if it is missing, and
// returns both free of symbolic links. Only a real directory of this
// user's, closed to others and in a place no one else can replace, will
// do for root: anything else (a name someone else made first, a link)
// fails the sandbox rather than being used or changed.
func newTmp(root string) (realRoot, dir string, err error) {
	if root == "" || !filepath.IsAbs(root) {
		return "", "", errcode.New(CodeFailed, "sandbox: no private directory for the commands' temporary directories")
	}
	if err := os.Mkdir(root, 0o700); err != nil && !errors.Is(err, os.ErrExist) {
		return "", "", errcode.New(CodeFailed, "sandbox: creating %s: %v", root, err)
	}
	if err := checkPrivateDir(root); err != nil {
		return "", "", errcode.New(CodeFailed, "sandbox: %s is not a private directory of this user (%v); hostlink will not put commands' files there", root, err)
	}
	made, err := os.MkdirTemp(root, "cmd-")
	if err == nil {
		if dir, err = filepath.EvalSymlinks(made); err != nil {
			os.Remove(made)
		}
	}
	if err != nil {
		return "", "", errcode.New(CodeFailed, "sandbox: creating a temporary directory: %v", err)
	}
	return filepath.Dir(dir), dir, nil
}
