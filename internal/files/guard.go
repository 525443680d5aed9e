package files

// Guard is consulted before each of hostlink's own mutations in a workdir,
// so that they never run beside an agent task writing there (see package
// lease). Mutation returns a release function to call when the mutation is
// done, or a typed error (WORKDIR_BUSY, WORKDIR_RECOVERY_REQUIRED) that
// fails the operation at once.
type Guard interface {
	Mutation(alias string) (release func(), err error)
}

// SetGuard installs g; call it before serving. Without one, mutations are
// not guarded.
func (s *Service) SetGuard(g Guard) { s.guard = g }

// mutating takes the guard for each distinct workdir a mutation touches.
func (s *Service) mutating(wds ...*Workdir) (func(), error) {
	if s.guard == nil {
		return func() {}, nil
	}
	var held []func()
	release := func() {
		for _, r := range held {
			r()
		}
	}
	for i, wd := range wds {
		if i > 0 && wd == wds[0] {
			continue
		}
		r, err := s.guard.Mutation(wd.Alias)
		if err != nil {
			release()
			return nil, err
		}
		held = append(held, r)
	}
	return release, nil
}
