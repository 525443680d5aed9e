package files

import (
	"github.com/hostlink/hostlink/internal/errcode"
)

// Dir is a directory inside a workdir, resolved for a process to start in.
type Dir struct {
	Workdir string // alias
	Rel     string // root-relative, symlinks resolved
	Abs     string // absolute host path
	Root    string // the workdir's own absolute host path (what a sandbox confines writes to)
}

// ResolveDir jails p (relative to the workdir alias, or absolute inside a
// workdir) and checks that it is a directory, for use as a command's
// working directory. Symlinks are resolved within the workdir; one that
// leads out is refused like any other path.
func (s *Service) ResolveDir(alias, p string) (Dir, error) {
	t, err := s.resolve(alias, p)
	if err != nil {
		return Dir{}, err
	}
	real, err := t.wd.Root.Canonical(t.path)
	if err != nil {
		return Dir{}, err
	}
	fi, err := t.wd.Root.Stat(real)
	if err != nil {
		return Dir{}, err
	}
	if !fi.IsDir() {
		return Dir{}, errcode.New(errcode.NotADirectory, "%q is not a directory", t.String())
	}
	return Dir{Workdir: t.wd.Alias, Rel: real.String(), Abs: t.wd.Root.Abs(real), Root: t.wd.Root.Dir()}, nil
}
