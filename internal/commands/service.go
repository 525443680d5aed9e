package commands

import (
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/capture"
	"github.com/hostlink/hostlink/internal/commandapi"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/files"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/procs"
	"github.com/hostlink/hostlink/internal/sandbox"
	"github.com/hostlink/hostlink/internal/textsafe"
)

// Budget is the machine-wide allowance of commands a platform may start:
// the protocol's 60 a minute and 10 running (run_command holds its slot
// while it runs, start_command only counts). Local agents are the user's
// own and are bound only by [commands] max_concurrent.
var Budget = &ops.Budget{Name: "commands", PerMinute: 60, Concurrent: 10, Transports: ops.Remote}

// gracePeriod is how long a terminated command's tree has between the
// graceful signal and the hard kill.
const gracePeriod = 2 * time.Second

// Options bound what commands may do.
type Options struct {
	MaxConcurrent  int
	DefaultTimeout time.Duration
	MaxTimeout     time.Duration
	InlineBytes    int // head+tail of each stream returned by run_command
	// Sandbox confines every command (its Workdir is set per command to
	// the command's workdir). An empty Mode means sandbox.Workdir: a
	// Service runs unconfined commands only when told Off.
	Sandbox sandbox.Policy
}

// Service runs commands and keeps track of the running ones.
type Service struct {
	files *files.Service
	store *capture.Store
	opts  Options
	slots chan struct{}

	mu      sync.Mutex
	running map[string]*job // by capture id
	closed  bool
}

// job is one running command.
type job struct {
	id       string
	desc     string // the command line or argv, for status
	started  time.Time
	proc     *procs.Process
	done     chan struct{} // closed once the capture is finished
	info     *capture.Info // final receipt, set before done is closed
	timedOut atomic.Bool
	killed   atomic.Bool // by kill_command or a cancelled run_command
	stdinMu  sync.Mutex
}

// New returns a Service running commands in the workdirs of fs, capturing
// output into store.
func New(fs *files.Service, store *capture.Store, o Options) *Service {
	if o.Sandbox.Mode == "" {
		o.Sandbox.Mode = sandbox.Workdir
	}
	return &Service{files: fs, store: store, opts: o, slots: make(chan struct{}, o.MaxConcurrent), running: make(map[string]*job)}
}

// Close ends every running command (graceful signal, then hard kill of the
// whole tree) and waits for their receipts to be recorded.
func (s *Service) Close() {
	s.mu.Lock()
	s.closed = true
	jobs := make([]*job, 0, len(s.running))
	for _, j := range s.running {
		jobs = append(jobs, j)
	}
	s.mu.Unlock()
	var wg sync.WaitGroup
	for _, j := range jobs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			j.killed.Store(true)
			j.proc.Terminate(gracePeriod)
			<-j.done
		}()
	}
	wg.Wait()
}

// Running is a command that is running now.
type Running struct {
	CaptureID string
	Command   string // the command line, or argv joined with spaces
	Pid       int
	Started   time.Time
}

// Running lists the running commands, oldest first.
func (s *Service) Running() []Running {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := make([]Running, 0, len(s.running))
	for _, j := range s.running {
		out = append(out, Running{CaptureID: j.id, Command: j.desc, Pid: j.proc.Pid(), Started: j.started})
	}
	sort.Slice(out, func(a, b int) bool { return out[a].Started.Before(out[b].Started) })
	return out
}

// start validates a request, creates its capture and starts the command.
// A repeated idempotency key returns the first run's info instead (and a
// nil job). keepStdin leaves stdin open for send_command_input.
func (s *Service) start(c *ops.Call, op string, a commandapi.RunArgs, keepStdin bool) (*job, *capture.Info, error) {
	timeout, err := s.timeout(a.TimeoutSeconds)
	if err != nil {
		return nil, nil, err
	}
	if (len(a.Argv) == 0) == (a.Command == "") {
		return nil, nil, errcode.New(errcode.InvalidArgument, "exactly one of argv and command must be given")
	}
	if len(a.Argv) > 0 && a.Argv[0] == "" {
		return nil, nil, errcode.New(errcode.InvalidArgument, "argv[0] is empty")
	}
	for k, v := range a.Env {
		if k == "" || strings.ContainsAny(k, "=\x00") || strings.ContainsRune(v, 0) {
			return nil, nil, errcode.New(errcode.InvalidArgument, "env has an invalid name or value (for %q)", textsafe.Clip(k, 64))
		}
	}
	dir, err := s.files.ResolveDir(a.Workdir, a.Cwd)
	if err != nil {
		s.files.RecordAttempt(c, a.Workdir, a.Cwd)
		return nil, nil, err
	}
	c.Target(dir.Workdir, dir.Rel)
	sb, sbDesc, err := s.sandboxFor(a.Sandbox, dir.Root)
	if err != nil {
		return nil, nil, err
	}
	c.Detail("sandbox", sbDesc)
	keys := make([]string, 0, len(a.Env))
	for k := range a.Env {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	c.Detail("env_keys", keys)
	c.Detail("timeout_seconds", timeout.Seconds())
	if len(a.Argv) > 0 && a.Shell != "" && a.Shell != "auto" {
		// argv inside a named shell: joined with that shell's quoting, so
		// its builtins and lookup apply while the arguments stay exact.
		line, err := procs.Line(a.Shell, a.Argv)
		if err != nil {
			return nil, nil, err
		}
		a.Command, a.Argv = line, nil
	}
	if len(a.Argv) > 0 {
		c.Detail("argv", truncateAll(a.Argv, 1024))
	} else {
		c.Detail("command", textsafe.Clip(a.Command, 1024))
		c.Detail("shell", a.Shell)
		if _, err := procs.ResolveShell(a.Shell); err != nil {
			return nil, nil, err
		}
	}
	if a.IdempotencyKey != "" {
		c.Detail("idempotency_key", textsafe.Clip(a.IdempotencyKey, 128))
	}
	select {
	case s.slots <- struct{}{}:
	default:
		return nil, nil, errcode.New(errcode.Overloaded, "%d commands are already running; wait for one to end", cap(s.slots))
	}
	release := func() { <-s.slots }
	cp, reused, err := s.store.Create(capture.Meta{
		Op: op, Argv: a.Argv, Command: a.Command, Shell: a.Shell,
		Workdir: dir.Workdir, Cwd: dir.Rel, EnvKeys: keys, IdempotencyKey: a.IdempotencyKey, Sandbox: sbDesc, Root: dir.Root,
	})
	if err != nil {
		release()
		return nil, nil, err
	}
	if reused != nil && !s.mine(c).Keeps(reused) {
		release()
		return nil, nil, errcode.New(errcode.Conflict, "the idempotency key was used for a command elsewhere; use another key")
	}
	if reused != nil {
		release()
		c.Detail("reused", reused.ID)
		return nil, reused, nil
	}
	c.Detail("capture_id", cp.ID())
	spec := procs.Spec{Argv: a.Argv, Command: a.Command, Shell: a.Shell, Dir: dir.Abs, Env: a.Env, Stdin: keepStdin || a.Stdin != nil, Sandbox: sb}
	// Last before it starts: the directory is still the one its approval
	// showed.
	if err := s.files.CheckShownDir(c, "cwd", a.Workdir, a.Cwd); err != nil {
		cp.Discard()
		release()
		return nil, nil, err
	}
	p, err := procs.Start(spec, cp.Stdout(), cp.Stderr())
	if err != nil {
		cp.Discard()
		release()
		return nil, nil, err
	}
	started := time.Now()
	if err := cp.Started(p.Pid(), started); err != nil {
		// The output is still captured; only the pid record failed, which
		// Finish will report as incomplete.
		c.Detail("started_error", "capture could not record the start")
	}
	desc := a.Command
	if desc == "" {
		desc = strings.Join(a.Argv, " ")
	}
	j := &job{id: cp.ID(), desc: textsafe.Clip(desc, 256), started: started, proc: p, done: make(chan struct{})}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		p.Kill()
		p.Wait()
		cp.Finish(capture.Receipt{Status: capture.StatusIncomplete, EndedAt: time.Now(), Reason: "hostlink is shutting down"})
		release()
		return nil, nil, errcode.New(errcode.Internal, "hostlink is shutting down")
	}
	s.running[j.id] = j
	s.mu.Unlock()
	if a.Stdin != nil {
		go s.writeStdin(j, *a.Stdin, !keepStdin)
	}
	go s.watch(j, cp, timeout, release)
	return j, nil, nil
}

// watch waits for the command, enforcing its timeout, and records how it
// ended.
func (s *Service) watch(j *job, cp *capture.Capture, timeout time.Duration, release func()) {
	timer := time.AfterFunc(timeout, func() {
		j.timedOut.Store(true)
		j.proc.Terminate(gracePeriod)
	})
	st, werr := j.proc.Wait()
	timer.Stop()
	r := capture.Receipt{EndedAt: st.Ended}
	switch {
	case werr != nil:
		r.Status, r.Reason = capture.StatusIncomplete, "waiting for the process failed"
	case j.timedOut.Load():
		r.Status, r.Signal = capture.StatusTimedOut, st.Signal
	case j.killed.Load() || st.Killed:
		r.Status, r.Signal = capture.StatusKilled, st.Signal
	case st.Signal != "":
		r.Status, r.Signal = capture.StatusKilled, st.Signal
	default:
		r.Status, r.ExitCode = capture.StatusExited, st.ExitCode
	}
	info, err := cp.Finish(r)
	if err != nil {
		info, _ = s.store.Get(j.id)
	}
	j.info = info
	s.mu.Lock()
	delete(s.running, j.id)
	s.mu.Unlock()
	release()
	close(j.done)
}

func (s *Service) writeStdin(j *job, data string, closeAfter bool) {
	j.stdinMu.Lock()
	defer j.stdinMu.Unlock()
	w := j.proc.Stdin()
	if w == nil {
		return
	}
	w.Write([]byte(data))
	if closeAfter {
		w.Close()
	}
}

// timeout is a request's timeout_seconds as a duration, checked against
// the bounds before it is converted: a huge value must not overflow into a
// short (or negative) timeout.
func (s *Service) timeout(seconds float64) (time.Duration, error) {
	switch {
	case !(seconds >= 0):
		return 0, errcode.New(errcode.InvalidArgument, "timeout_seconds must not be negative")
	case seconds == 0:
		return s.opts.DefaultTimeout, nil
	case seconds > s.opts.MaxTimeout.Seconds():
		return 0, errcode.New(errcode.InvalidArgument, "timeout_seconds %.0f exceeds the maximum of %.0f", seconds, s.opts.MaxTimeout.Seconds()).
			With("max_timeout_seconds", s.opts.MaxTimeout.Seconds())
	}
	return secondsDuration(seconds), nil
}

// mine keeps only the captures of commands run in this service's workdirs:
// a platform session's registry (its folder) does not see, read or reuse
// the commands local clients ran in the configured workdirs, nor they its.
// The web console is the user's, and sees every command.
func (s *Service) mine(c *ops.Call) capture.Filter {
	if c != nil && c.Transport == audit.Console {
		return capture.Filter{}
	}
	f := capture.Filter{Roots: []string{}}
	for _, wd := range s.files.Workdirs() {
		f.Roots = append(f.Roots, wd.Root.Dir())
		f.Aliases = append(f.Aliases, wd.Alias)
	}
	return f
}

// get is the capture id if c may see it (mine), else CAPTURE_NOT_FOUND
// as for an id that expired.
func (s *Service) get(c *ops.Call, id string) (*capture.Info, error) {
	info, err := s.store.Get(id)
	if err != nil {
		return nil, err
	}
	if !s.mine(c).Keeps(info) {
		return nil, errcode.New(capture.CodeNotFound, "no capture %s (it may have expired)", id)
	}
	return info, nil
}

// lookup returns the running job for a capture id, or nil if it is not
// running (it may still be a known, finished capture).
func (s *Service) lookup(id string) *job {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.running[id]
}

// receipt builds the response for a capture.
func (s *Service) receipt(c *ops.Call, id string, reused bool) (commandapi.Receipt, error) {
	return s.receiptInline(c, id, reused, 0)
}

// receiptInline is receipt with each stream's inline view its first head
// bytes when head > 0 (RunArgs.InlineHead).
func (s *Service) receiptInline(c *ops.Call, id string, reused bool, head int64) (commandapi.Receipt, error) {
	info, err := s.get(c, id)
	if err != nil {
		return commandapi.Receipt{}, err
	}
	r := commandapi.Receipt{
		CaptureID: info.ID,
		Pid:       info.Pid,
		Status:    string(info.Status),
		ExitCode:  info.ExitCode,
		Signal:    info.Signal,
		TimedOut:  info.Status == capture.StatusTimedOut,
		Reused:    reused,
	}
	if !info.StartedAt.IsZero() {
		r.StartedAt = info.StartedAt.UTC().Format(time.RFC3339Nano)
		end := time.Now()
		if !info.EndedAt.IsZero() {
			end = info.EndedAt
			r.EndedAt = info.EndedAt.UTC().Format(time.RFC3339Nano)
		}
		r.DurationSeconds = end.Sub(info.StartedAt).Seconds()
	}
	if r.Stdout, err = s.inline(id, capture.Stdout, info.Stdout, head); err != nil {
		return commandapi.Receipt{}, err
	}
	if r.Stderr, err = s.inline(id, capture.Stderr, info.Stderr, head); err != nil {
		return commandapi.Receipt{}, err
	}
	if r.ExitCode == nil && (info.Status == capture.StatusKilled || info.Status == capture.StatusTimedOut) {
		// As the wire protocol's COMMAND_RESULT has it.
		minusOne := -1
		r.ExitCode = &minusOne
	}
	r.Sandbox = info.Meta.Sandbox
	if info.Status == capture.StatusExited && info.ExitCode != nil && *info.ExitCode != 0 && strings.HasPrefix(info.Meta.Sandbox, string(sandbox.Workdir)) {
		if dir, err := s.files.ResolveDir(info.Meta.Workdir, ""); err == nil {
			r.SandboxHint = sandbox.Hint(s.opts.Sandbox, dir.Root, r.Stderr.Head+"\n"+r.Stderr.Tail)
		}
	}
	r.OutputTruncated = r.Stdout.Truncated || r.Stderr.Truncated || r.Stdout.InlineOmitted > 0 || r.Stderr.InlineOmitted > 0
	return r, nil
}

// sandboxFor returns the confinement of a command in the workdir at root
// that asked for requested ("", "default", "network" or "off"; anything
// but the default has passed the commands_unsandboxed policy), and how it
// is described in its receipt and audit record. A nil policy runs the
// command unconfined: only when asked for "off" (and approved) or
// configured so; a configured sandbox that cannot be set up here refuses
// the command (SANDBOX_FAILED).
func (s *Service) sandboxFor(requested, root string) (*sandbox.Policy, string, error) {
	p := s.opts.Sandbox
	p.Workdir = root
	switch requested {
	case "", "default":
	case "network":
		p.Network = true
	case "off":
		return nil, "off (requested by this command)", nil
	default:
		return nil, "", errcode.New(errcode.InvalidArgument, "sandbox must be default, network or off")
	}
	st := sandbox.Effective(p.Mode)
	switch st.Mode {
	case sandbox.Off:
		return nil, st.String(), nil
	case sandbox.Failed:
		return nil, "", sandbox.FailedError(st)
	}
	desc := st.String()
	if p.Network {
		desc += "; network allowed"
	}
	return &p, desc, nil
}

func truncateAll(ss []string, n int) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = textsafe.Clip(s, n)
	}
	return out
}

func notRunning(id string) error {
	return errcode.New(errcode.Conflict, "command %s is not running", id)
}
