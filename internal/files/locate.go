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
