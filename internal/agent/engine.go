package agent

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"github.com/hostlink/hostlink/internal/agentapi"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/files"
	"github.com/hostlink/hostlink/internal/lease"
	"github.com/hostlink/hostlink/internal/private"
)

// Agent modes of a workdir.
const (
	ModeDisabled       = "disabled"
	ModeReadOnly       = "read-only"
	ModeWorkspaceWrite = "workspace-write"
)

// WorkdirPolicy is what agents may do in one workdir.
type WorkdirPolicy struct {
	Alias    string
	Mode     string   // ModeDisabled, ModeReadOnly or ModeWorkspaceWrite
	Runtimes []string // further limits the engine's allowed runtimes; empty: no further limit
}

// Limits bound the engine's work.
type Limits struct {
	MaxConcurrent   int           // tasks not yet terminal, across every hostlink process
	MaxPromptBytes  int           // per prompt or message
	ApprovalTimeout time.Duration // a pending approval or question expires after it
	TurnTimeout     time.Duration // a turn is interrupted after it
	MaxResultBytes  int64         // longer results are cut (at a UTF-8 boundary)
	CancelGrace     time.Duration // after an interrupt, wait this long before killing the runtime
	// Limits on external programs (a busy machine can make a CLI slow).
	ProbeTimeout  time.Duration // a readiness check (list_agent_runtimes, submit) waits this long
	ModelsTimeout time.Duration // list_agent_models waits this long for the runtime's list
	StartTimeout  time.Duration // starting a runtime, for a task or for its model list, may take this long
}

// Config keys of the limits on external programs, as errors name them.
const (
	ProbeTimeoutKey  = "agents.probe_timeout_seconds"
	ModelsTimeoutKey = "agents.models_timeout_seconds"
	StartTimeoutKey  = "agents.start_timeout_seconds"
)

// Factory creates a runtime adapter. It runs at first use, not at start-up,
// so an absent or broken runtime never stops the others or hostlink.
type Factory func() (Runtime, error)

// Options configure an Engine.
type Options struct {
	// Dir is the engine's private state directory: agents.db, results/,
	// leases/, owners/ and runtimes/.
	Dir string
	// Files resolves a task's working directory in its workdir.
	Files *files.Service
	// Workdirs are the agent policies; a workdir not listed is disabled.
	Workdirs []WorkdirPolicy
	// Runtimes are the adapters by name; Allowed lists those that may run.
	Runtimes map[string]Factory
	Allowed  []string
	Limits   Limits
	// Version is hostlink's version, for manifests.
	Version string
	// Now is the clock (default time.Now).
	Now func() time.Time
}

// Engine runs agent tasks: it owns the store, the leases and the runs
// driven by this process.
type Engine struct {
	o      Options
	store  *Store
	leases *lease.Workdirs
	spool  *spool
	owner  string      // this engine's instance id
	held   *lease.Lock // owners/<owner>.lock, held for the engine's life

	// ctx is cancelled once Close has asked every run to stop, so that
	// runtime calls still waiting give up.
	ctx       context.Context
	cancelCtx context.CancelFunc

	mu       sync.Mutex
	runtimes map[string]Runtime
	runs     map[string]*run // tasks driven by this process
	writing  map[string]string
	ready    map[string]*readyEntry  // the newest readiness of each runtime
	models   map[string]*modelsEntry // each runtime's model list, listed or being listed
	closed   bool
	wg       sync.WaitGroup
}

// Open opens the engine's state, then reconciles every task a previous
// (now dead) hostlink process left unfinished.
func Open(o Options) (*Engine, error) {
	if o.Now == nil {
		o.Now = time.Now
	}
	l := &o.Limits
	l.MaxConcurrent = cmp(l.MaxConcurrent, 4)
	l.MaxPromptBytes = cmp(l.MaxPromptBytes, 256<<10)
	l.ApprovalTimeout = cmp(l.ApprovalTimeout, 10*time.Minute)
	l.TurnTimeout = cmp(l.TurnTimeout, time.Hour)
	l.MaxResultBytes = cmp(l.MaxResultBytes, 64<<20)
	l.CancelGrace = cmp(l.CancelGrace, 5*time.Second)
	l.ProbeTimeout = cmp(l.ProbeTimeout, 15*time.Second)
	l.ModelsTimeout = cmp(l.ModelsTimeout, time.Minute)
	l.StartTimeout = cmp(l.StartTimeout, 2*time.Minute)
	for _, d := range []string{o.Dir, filepath.Join(o.Dir, "owners"), filepath.Join(o.Dir, "runtimes")} {
		if err := private.MkdirAll(d); err != nil {
			return nil, fmt.Errorf("agent: %w", err)
		}
	}
	e := &Engine{o: o, runtimes: map[string]Runtime{}, runs: map[string]*run{}, writing: map[string]string{},
		ready: map[string]*readyEntry{}, models: map[string]*modelsEntry{}}
	e.ctx, e.cancelCtx = context.WithCancel(context.Background())
	e.owner = "eng_" + rand.Text()
	held, err := lease.TryLock(e.ownerPath(e.owner), lease.Exclusive)
	if err != nil {
		return nil, fmt.Errorf("agent: owner lock: %w", err)
	}
	e.held = held
	ok := false
	defer func() {
		if !ok {
			e.closeState()
		}
	}()
	if e.store, err = OpenStore(o.Dir); err != nil {
		return nil, err
	}
	if e.leases, err = lease.OpenWorkdirs(LeaseDir(o.Dir)); err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	if e.spool, err = openSpool(filepath.Join(o.Dir, "results")); err != nil {
		return nil, fmt.Errorf("agent: %w", err)
	}
	if err := e.recover(); err != nil {
		return nil, fmt.Errorf("agent: recovering unfinished tasks: %w", err)
	}
	ok = true
	return e, nil
}

// ownerPatience bounds the wait for a dead owner's lock at start-up.
const ownerPatience = 2 * time.Second

func cmp[T int | int64 | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// LeaseDir is where an engine with state directory dir keeps the workdir
// leases and guards (for `hostlink agent recover`, which needs no engine).
func LeaseDir(dir string) string { return filepath.Join(dir, "leases") }

func (e *Engine) ownerPath(owner string) string {
	return filepath.Join(e.o.Dir, "owners", owner+".lock")
}

// Leases returns the workdir leases, for hostlink's own file mutations.
func (e *Engine) Leases() *lease.Workdirs { return e.leases }

// Store returns the engine's store (for tests and tools).
func (e *Engine) Store() *Store { return e.store }

// Close interrupts every task this process drives, waits for them to end
// (each as cancelled, with its runtime process ended) and closes the store.
func (e *Engine) Close() error {
	e.mu.Lock()
	if e.closed {
		e.mu.Unlock()
		return nil
	}
	e.closed = true
	runs := make([]*run, 0, len(e.runs))
	for _, r := range e.runs {
		runs = append(runs, r)
	}
	e.mu.Unlock()
	for _, r := range runs {
		r.cancel("hostlink is shutting down")
	}
	e.cancelCtx()
	e.wg.Wait()
	return e.closeState()
}

func (e *Engine) closeState() error {
	e.cancelCtx()
	var err error
	if e.store != nil {
		err = e.store.Close()
	}
	if e.held != nil {
		e.held.Release()
		os.Remove(e.ownerPath(e.owner))
	}
	return err
}

// policy returns alias's agent policy.
func (e *Engine) policy(alias string) WorkdirPolicy {
	for _, w := range e.o.Workdirs {
		if w.Alias == alias {
			return w
		}
	}
	return WorkdirPolicy{Alias: alias, Mode: ModeDisabled}
}

// allowed reports whether runtime name may run in workdir p.
func (e *Engine) allowed(name string, p WorkdirPolicy) bool {
	if !slices.Contains(e.o.Allowed, name) {
		return false
	}
	return len(p.Runtimes) == 0 || slices.Contains(p.Runtimes, name)
}

// runtime returns the adapter for name, creating it on first use.
func (e *Engine) runtime(name string) (Runtime, error) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if rt, ok := e.runtimes[name]; ok {
		return rt, nil
	}
	f, ok := e.o.Runtimes[name]
	if !ok || !slices.Contains(e.o.Allowed, name) {
		return nil, errcode.New(CodeRuntimeUnavailable, "runtime %q is not available", name)
	}
	rt, err := f()
	if err != nil {
		return nil, errcode.New(CodeRuntimeUnavailable, "runtime %q cannot be loaded", name)
	}
	e.runtimes[name] = rt
	return rt, nil
}

func (e *Engine) runtimeDir(name string) string { return filepath.Join(e.o.Dir, "runtimes", name) }

// recover reconciles every unfinished task whose process is gone, through
// its runtime where the runtime can prove what happened, and records what
// it found in the workdir guards that dead writers left.
func (e *Engine) recover() error {
	tasks, err := e.store.Unfinished()
	if err != nil {
		return err
	}
	dead := map[string]bool{}
	// A process forked by an owner that died may hold a copy of its lock
	// until it execs; a live owner holds it for good. Wait out the first.
	patience := time.Now().Add(ownerPatience)
	for _, t := range tasks {
		if t.Owner == e.owner {
			continue
		}
		gone, seen := dead[t.Owner]
		if !seen {
			for {
				l, err := lease.TryLock(e.ownerPath(t.Owner), lease.Exclusive)
				if gone = err == nil; gone {
					l.Release()
					os.Remove(e.ownerPath(t.Owner))
				}
				if gone || !errors.Is(err, lease.ErrBusy) || time.Now().After(patience) {
					break
				}
				time.Sleep(20 * time.Millisecond)
			}
			dead[t.Owner] = gone
		}
		if gone {
			if err := e.reconcile(t); err != nil {
				return err
			}
		}
	}
	orphans, err := e.leases.Orphans()
	if err != nil {
		return err
	}
	for _, g := range orphans {
		if g.Reconciled != "" {
			continue
		}
		found := "task not found"
		if t, err := e.store.Get(g.TaskID); err == nil {
			found = string(t.Status)
			if t.Reason != "" {
				found += ": " + t.Reason
			}
		}
		e.leases.Mark(g.Alias, found)
	}
	return nil
}

// reconcile settles one task a dead process left unfinished.
func (e *Engine) reconcile(t Task) error {
	to, reason := Interrupted, "hostlink stopped before the task started"
	var result *ResultMeta
	if t.SessionID != "" {
		to, reason = Interrupted, "hostlink stopped mid-turn; the runtime cannot say how the turn ended"
		if st, ok := e.resume(t); ok && st.Known {
			switch {
			case st.Status == TurnCompleted && st.TurnID == t.TurnID && CanTransition(t.Status, Completed):
				meta, _, err := e.spool.put(t.ID, st.Result, e.o.Limits.MaxResultBytes)
				if err == nil {
					to, reason, result = Completed, "reconciled after a restart: the runtime had completed the turn", &meta
				}
			case st.Status == "":
				reason = "hostlink stopped mid-turn; the runtime's turn was still running and has been interrupted"
			default:
				reason = "hostlink stopped mid-turn; the runtime recorded the turn as " + string(st.Status)
			}
		}
	} else if t.Status != Queued {
		reason = "hostlink stopped while the runtime was starting"
	}
	_, _, err := e.store.Apply(t.ID, e.o.Now(), Change{To: to, Reason: reason, Result: result, Owner: e.owner,
		Events: []agentapi.Event{{Type: "task.reconciled", SessionID: t.SessionID, TurnID: t.TurnID, Data: map[string]any{"status": string(to)}}}})
	var ec *errcode.Error
	if errors.As(err, &ec) && ec.Code == CodeInvalidState {
		return nil // another process reconciled it first
	}
	return err
}

// resume asks the task's runtime what became of its session's last turn,
// interrupting it if it is somehow still running, then lets it go.
func (e *Engine) resume(t Task) (TurnState, bool) {
	rt, err := e.runtime(t.Runtime)
	if err != nil {
		return TurnState{}, false
	}
	ctx, cancel := context.WithTimeout(e.ctx, e.o.Limits.StartTimeout)
	defer cancel()
	spec := SessionSpec{TaskID: t.ID, Dir: "", Model: t.Model, Access: t.Access, StateDir: e.runtimeDir(t.Runtime)}
	if d, err := e.o.Files.ResolveDir(t.Workdir, t.Cwd); err == nil {
		spec.Dir = d.Abs
	}
	sess, st, err := rt.Resume(ctx, spec, t.SessionID, discard{})
	if err != nil {
		return TurnState{}, false
	}
	if st.Known && st.Status == "" {
		sess.Interrupt(ctx, st.TurnID)
	}
	sess.Close()
	return st, true
}

// discard is the Sink of a session resumed only to be asked about.
type discard struct{}

func (discard) Item(Item)         {}
func (discard) Request(Request)   {}
func (discard) Withdraw(string)   {}
func (discard) TurnEnded(TurnEnd) {}
func (discard) Exited(error)      {}

// Recover clears alias's active-task guard after the user has reviewed the
// workdir (`hostlink agent recover ALIAS`). A live lease is WORKDIR_BUSY.
func (e *Engine) Recover(alias string) (*lease.Guard, error) {
	return e.leases.Clear(alias)
}

func newID(prefix string) string { return prefix + rand.Text() }
