package files

// Locate resolves a request's workdir alias and path exactly as the file
// operations do, without touching the file system: it returns the workdir's
// alias, its canonical directory and the root-relative path. The approval
// policy uses it to judge and describe an action before it runs.
func (s *Service) Locate(alias, path string) (workdir, dir, rel string, err error) {
	t, err := s.resolve(alias, path)
	if err != nil {
		return "", "", "", err
	}
	return t.wd.Alias, t.wd.Root.Dir(), t.path.String(), nil
}

// Canonical resolves a request's path as Locate does and then follows
// every symlink on it through the jail's identity-checked walk
// (jail.Root.Canonical): the root-relative path an operation on it would
// act on, components past the first missing one kept as written. Policy
// that matches paths (allow_paths) must match this path, not the one
// written: with a planted scratch/up -> ../src, scratch/up/main.go is
// src/main.go. A path the jail refuses (outside the workdir, in hostlink's
// own directories) is an error. The operation's own walk still decides
// what it acts on; this answer may be stale by then.
func (s *Service) Canonical(alias, path string) (workdir, rel string, err error) {
	t, err := s.resolve(alias, path)
	if err != nil {
		return "", "", err
	}
	c, err := t.wd.Root.Canonical(t.path)
	if err != nil {
		return "", "", err
	}
	return t.wd.Alias, c.String(), nil
}
