package files

import (
	"hash/fnv"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/hostlink/hostlink/internal/auditapi"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/jail"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/textsafe"
)

// Limits bound what one call may read, write, list or scan.
type Limits struct {
	MaxReadBytes       int64
	MaxWriteBytes      int64
	MaxListEntries     int
	MaxSearchMatches   int
	MaxSearchBytes     int64
	MaxSearchFileBytes int64
}

// Workdir is a configured root that file operations may act in.
type Workdir struct {
	Alias       string
	Description string
	Root        *jail.Root
}

// Service holds the workdirs and limits the file operations use.
type Service struct {
	workdirs []*Workdir // first is the default
	limits   Limits
	locks    [64]sync.Mutex
	guard    Guard // nil: mutations are not guarded
	cursors  *cursors
	// commandSandbox describes the commands' sandbox for list_workdirs.
	commandSandbox atomic.Pointer[func() string]
}

// NewService returns a Service over workdirs; the first is the default for
// requests that name none.
func NewService(workdirs []*Workdir, limits Limits) *Service {
	return &Service{workdirs: workdirs, limits: limits, cursors: newCursors()}
}

// Workdirs returns the configured workdirs, default first.
func (s *Service) Workdirs() []*Workdir { return slices.Clone(s.workdirs) }

// target is a resolved request path.
type target struct {
	wd   *Workdir
	path jail.Path
}

func (t target) String() string { return t.path.String() }

// resolve finds the workdir a request means and resolves its path there.
// With no alias, an absolute path picks the workdir that contains it and a
// relative path means the default workdir.
func (s *Service) resolve(alias, p string) (target, error) {
	if p == "" {
		p = "."
	}
	if alias != "" {
		for _, wd := range s.workdirs {
			if strings.EqualFold(wd.Alias, alias) {
				jp, err := wd.Root.Resolve(p)
				return target{wd, jp}, err
			}
		}
		return target{}, errcode.New(errcode.UnknownWorkdir, "no workdir named %q", alias)
	}
	if len(s.workdirs) == 0 {
		return target{}, errcode.New(errcode.UnknownWorkdir, "no workdirs are configured")
	}
	var firstErr error
	for _, wd := range s.workdirs {
		jp, err := wd.Root.Resolve(p)
		if err == nil {
			return target{wd, jp}, nil
		}
		if firstErr == nil || errcode.CodeOf(firstErr) == errcode.PathOutsideRoot {
			firstErr = err
		}
		if !isAbs(p) {
			return target{}, err
		}
	}
	return target{}, firstErr
}

// RecordAttempt records, for c's audit record, a path that was refused
// before the operation acted (it did not resolve in the workdir alias
// names): what was attempted, in the form jail.Root.AuditPath gives, with
// the detail path_outside when it lies outside the workdir.
func (s *Service) RecordAttempt(c *ops.Call, alias, p string) {
	record(c, s.attempt(alias, p))
}

// attempt is what a request attempted at alias and p, for the audit record
// of a refusal (see attempted).
func (s *Service) attempt(alias, p string) auditapi.Target {
	rel, outside := s.attempted(alias, p)
	wd := alias
	if w := s.workdirFor(alias); w != nil {
		wd = w.Alias
	}
	return auditapi.Target{Workdir: truncateAlias(wd), Paths: []string{rel}, Outside: outside}
}

// record notes t in c's audit record, for an operation that places a
// path as it acts rather than as it normalizes (ops.Targeted).
func record(c *ops.Call, t auditapi.Target) {
	c.Target(t.Workdir, t.Paths...)
	if t.Outside {
		c.Detail("path_outside", true)
	}
}

// attempted describes a path that did not resolve, for the audit record,
// as jail.Root.AuditPath does against the workdir the request names (the
// default one when it names none): root-relative inside, starting with
// "../" outside, never an absolute host path outside the workdirs.
func (s *Service) attempted(alias, p string) (rel string, outside bool) {
	if p == "" {
		p = "."
	}
	if alias == "" && isAbs(p) {
		// An absolute path picks the workdir that holds it.
		for _, wd := range s.workdirs {
			if rel, outside := wd.Root.AuditPath(p); !outside {
				return rel, false
			}
		}
	}
	if w := s.workdirFor(alias); w != nil {
		return w.Root.AuditPath(p)
	}
	if len(s.workdirs) > 0 && !isAbs(p) {
		// An unknown workdir: a relative path is still worth recording.
		return s.workdirs[0].Root.AuditPath(p)
	}
	return jail.Outside, true
}

// workdirFor is the workdir alias names, or the default for "".
func (s *Service) workdirFor(alias string) *Workdir {
	for _, wd := range s.workdirs {
		if strings.EqualFold(wd.Alias, alias) {
			return wd
		}
	}
	if alias == "" && len(s.workdirs) > 0 {
		return s.workdirs[0]
	}
	return nil
}

// truncateAlias bounds an alias a caller sent (it may name no workdir) in
// the audit record.
func truncateAlias(a string) string {
	return textsafe.Clip(strings.ToValidUTF8(a, "\uFFFD"), 64)
}

func isAbs(p string) bool {
	return strings.HasPrefix(p, "/") || strings.HasPrefix(p, `\`) ||
		(len(p) >= 2 && p[1] == ':')
}

// lock serializes hostlink's own writers of one path (keyed without case on
// case-insensitive volumes). Locks are striped, so unrelated paths may
// share one; callers needing two take them through lockPair.
func (s *Service) lock(t target) func() {
	i := s.stripe(t)
	s.locks[i].Lock()
	return s.locks[i].Unlock
}

func (s *Service) lockPair(a, b target) func() {
	i, j := s.stripe(a), s.stripe(b)
	if i == j {
		s.locks[i].Lock()
		return s.locks[i].Unlock
	}
	if i > j {
		i, j = j, i
	}
	s.locks[i].Lock()
	s.locks[j].Lock()
	return func() { s.locks[j].Unlock(); s.locks[i].Unlock() }
}

func (s *Service) stripe(t target) int {
	key := t.wd.Alias + "\x00" + t.path.String()
	if t.wd.Root.CaseInsensitive() {
		key = strings.ToLower(key)
	}
	h := fnv.New32a()
	h.Write([]byte(key))
	return int(h.Sum32() % uint32(len(s.locks)))
}
