package files

import (
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
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
	return s.location(place{t: t}), nil
}

// peek reads the file at t, as the file operations would read it
// (through the jail, following a link that stays in the workdir, within
// the read limit), for an approval to show what a write changes, and
// says what is there (probe): what the approval binds. A directory or
// special file there is NOT_A_FILE; a file past the read limit
// FILE_TOO_LARGE with its extent.
func (s *Service) peek(t target) (content []byte, ext policy.Extent, err error) {
	sn, err := s.probe(t, true, true)
	if err == nil && sn.ext.Exists && sn.ext.Kind != "file" {
		err = errcode.New(errcode.NotAFile, "%q is not a regular file", t.String())
	}
	return sn.content, sn.ext, err
}

// measure says what is at t, without following a final symlink (as
// delete and move treat it): its kind, identity and size, a file's
// revision and, for a directory, the entries and bytes of the whole tree
// below it, walked through the jail (never through a link, hostlink's own
// directories left out). A missing path is an extent that does not
// exist, with a nil error.
func (s *Service) measure(t target) (policy.Extent, error) {
	sn, err := s.probe(t, false, false)
	return sn.ext, err
}

// MeasureDir says what the directory a command or an agent task would
// work in is: what the path reaches, following links as ResolveDir does,
// with its identity and the directory holding it, but not its contents
// (the work itself changes them). An approval binds it, so that what runs
// runs in the directory the user was shown (CheckShownDir).
func (s *Service) MeasureDir(alias, path string) (policy.Extent, error) {
	t, err := s.resolve(alias, path)
	if err != nil {
		return policy.Extent{}, err
	}
	sn, err := s.probe(t, true, false)
	return sn.ext, err
}

// CheckShownDir fails with CONFLICT when the call runs on an approval that
// showed the directory at role (MeasureDir) and alias and path no longer
// reach that directory: moved, replaced, or a link on the way swapped
// since. A command or task is started right after it; the path is
// resolved again as it starts, so a swap in between (microseconds) stays
// possible, as for renames on Unix.
func (s *Service) CheckShownDir(c *ops.Call, role, alias, path string) error {
	if _, bound := c.Shown(role); !bound {
		return nil
	}
	if path == "" {
		path = "."
	}
	t, err := s.resolve(alias, path)
	if err != nil {
		return err
	}
	_, _, _, err = s.shown(c, role, t, true)
	return err
}
