package files

import (
	"github.com/hostlink/hostlink/internal/auditapi"
	"github.com/hostlink/hostlink/internal/fileapi"
	"github.com/hostlink/hostlink/internal/policy"
)

// place is a request's path placed once, as it normalizes (Service.place):
// the workdir it names and the path's lexical resolution there (jail.Root
// Resolve), or what was attempted when that refused it. The handler's own
// walk through the jail decides, as it acts, what the path reaches.
type place struct {
	t     target
	audit auditapi.Target
}

// AuditTarget implements ops.Targeted.
func (p place) AuditTarget() auditapi.Target { return p.audit }

// place resolves alias and path as resolve does. A refused path is an
// error with the place attempted (see attempted), for the audit record.
func (s *Service) place(alias, path string) (place, error) {
	t, err := s.resolve(alias, path)
	if err == nil {
		return place{t: t, audit: auditapi.Target{Workdir: t.wd.Alias, Paths: []string{t.String()}}}, nil
	}
	return place{audit: s.attempt(alias, path)}, err
}

// location is where p is, as the policy places it (see Locate).
func (s *Service) location(p place) policy.Location {
	loc := policy.Location{Workdir: p.t.wd.Alias, Dir: p.t.wd.Root.Dir(), Rel: p.t.path.String()}
	if real, err := p.t.wd.Root.Canonical(p.t.path); err == nil {
		loc.Real = real.String()
	}
	return loc
}

// pathRequest is a request naming one path (fileapi's requests with At).
type pathRequest interface{ At() fileapi.PathArgs }

// placed is a one-path request normalized (normalizePath): its path
// placed once, the rest as sent.
type placed[A pathRequest] struct {
	place
	args A
}

// normalizePath places a one-path request's path once, for its
// description and its handler.
func normalizePath[A pathRequest](s *Service, a A) (placed[A], error) {
	p := a.At()
	pl, err := s.place(p.Workdir, p.Path)
	return placed[A]{pl, a}, err
}

// describeAt describes a one-path request before its path is placed
// (hash_file, which resolves it in its handler): where the path is on
// this host.
func describeAt[A pathRequest](_ *Service, a A, dc policy.DescribeContext) (policy.Action, error) {
	p := a.At()
	act, _, err := describePath(dc, p.Workdir, p.Path)
	return act, err
}

// describePlaced describes a one-path request that shows nothing else:
// where its path is on this host.
func describePlaced[A pathRequest](s *Service, r placed[A], dc policy.DescribeContext) (policy.Action, error) {
	act, _ := s.describePlace(r.place, dc)
	return act, nil
}

// describePlace starts the description of a request acting at p: where
// it is on this host, as the field "Path" and in the summary.
func (s *Service) describePlace(p place, dc policy.DescribeContext) (policy.Action, string) {
	var act policy.Action
	shown := act.Touch(s.location(p))
	act.Add("Path", shown)
	act.Summary = dc.Op + " " + shown
	return act, shown
}
