package files

import (
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/policy"
)

// Locate resolves a request's workdir alias and path exactly as the file
// operations do: the workdir, its canonical directory, the root-relative
// path and, following every symlink through the jail's identity-checked
// walk (jail.Root.Canonical), the object it names. The approval policy
// uses it to judge and describe an action before it runs: allow_paths must
// match both forms, since with a planted scratch/up -> ../src,
// scratch/up/main.go is src/main.go. Real is empty where the walk refuses
// the path (outside the workdir, in hostlink's own directories); the
// operation's own walk still decides what it acts on.
func (s *Service) Locate(alias, path string) (policy.Location, error) {
	t, err := s.resolve(alias, path)
	if err != nil {
		return policy.Location{}, err
	}
	loc := policy.Location{Workdir: t.wd.Alias, Dir: t.wd.Root.Dir(), Rel: t.path.String()}
	if real, err := t.wd.Root.Canonical(t.path); err == nil {
		loc.Real = real.String()
	}
	return loc, nil
}

// Peek reads the file a request names, as the file operations would read
// it (through the jail, within the read limit), for an approval to show
// what a write changes. exists is false when there is no such file.
func (s *Service) Peek(alias, path string) (content []byte, exists bool, err error) {
	t, err := s.resolve(alias, path)
	if err != nil {
		return nil, false, err
	}
	// A write goes through a link that stays in the workdir: read what
	// it would replace.
	if real, err := t.wd.Root.Canonical(t.path); err == nil {
		t.path = real
	}
	data, _, err := s.readWhole(t)
	if errcode.CodeOf(err) == errcode.PathNotFound {
		return nil, false, nil
	}
	return data, err == nil, err
}
