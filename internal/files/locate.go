package files

import (
	"io/fs"

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

// maxMeasured bounds the entries Measure counts, so that describing a
// delete of a huge tree stays cheap; past it the extent is partial.
const maxMeasured = 100_000

// Measure says what is at the path a request names, without following a
// final symlink (as delete and move treat it): its kind and, for a
// directory, the entries and bytes of the whole tree below it, walked
// through the jail (never through a link, hostlink's own directories left
// out). A missing path is Extent{} with a nil error.
func (s *Service) Measure(alias, path string) (policy.Extent, error) {
	t, err := s.resolve(alias, path)
	if err != nil {
		return policy.Extent{}, err
	}
	fi, err := t.wd.Root.Lstat(t.path)
	if errcode.CodeOf(err) == errcode.PathNotFound {
		return policy.Extent{}, nil
	}
	if err != nil {
		return policy.Extent{}, err
	}
	ext := policy.Extent{Exists: true, Kind: kind(fi)}
	if !fi.IsDir() {
		ext.Bytes = fi.Size()
		return ext, nil
	}
	err = t.wd.Root.WalkDir(t.path, func(p string, d fs.DirEntry, err error) error {
		if err != nil || p == t.path.String() {
			return nil
		}
		if ext.Entries >= maxMeasured {
			ext.Partial = true
			return fs.SkipAll
		}
		ext.Entries++
		if info, err := d.Info(); err == nil && info.Mode().IsRegular() {
			ext.Bytes += info.Size()
		}
		return nil
	})
	return ext, err
}
