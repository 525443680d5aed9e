package lease

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/private"
)

// Codes this package adds to internal/errcode's.
const (
	// CodeBusy: an agent task is writing in the workdir now; try later.
	CodeBusy errcode.Code = "WORKDIR_BUSY"
	// CodeRecoveryRequired: a writer died mid-turn in the workdir; its
	// content may be half-changed until the task is reconciled or the user
	// runs `hostlink agent recover ALIAS`.
	CodeRecoveryRequired errcode.Code = "WORKDIR_RECOVERY_REQUIRED"
)

// writerWait is how long Writer retries while hostlink's own mutations
// hold the lease shared: each lasts one file operation.
var writerWait = 2 * time.Second

// Guard is the persistent record of a writer's turn in a workdir.
type Guard struct {
	Alias   string    `json:"alias"`
	TaskID  string    `json:"task_id"`
	Owner   string    `json:"owner"` // engine instance that took the lease
	PID     int       `json:"pid"`
	Started time.Time `json:"started"`
	// Reconciled says what start-up recovery found, once it has looked.
	Reconciled string `json:"reconciled,omitempty"`
}

// Workdirs manages the leases and guards of every workdir, in one private
// directory: ALIAS.lock files and active/ALIAS.json guards.
type Workdirs struct {
	dir string
}

// OpenWorkdirs creates (privately) dir and its active/ subdirectory.
func OpenWorkdirs(dir string) (*Workdirs, error) {
	if err := private.MkdirAll(filepath.Join(dir, "active")); err != nil {
		return nil, err
	}
	if err := private.MkdirAll(dir); err != nil {
		return nil, err
	}
	return &Workdirs{dir: dir}, nil
}

func (w *Workdirs) lockPath(alias string) string { return filepath.Join(w.dir, key(alias)+".lock") }
func (w *Workdirs) guardPath(alias string) string {
	return filepath.Join(w.dir, "active", key(alias)+".json")
}

// key is the file name for alias. Config validation keeps aliases to
// [a-z0-9_-]; anything else is refused here rather than trusted.
func key(alias string) string {
	if alias == "" || strings.ContainsAny(alias, `/\:.`) {
		panic("lease: bad workdir alias " + alias)
	}
	return strings.ToLower(alias)
}

// Mutation takes alias's lease shared for one of hostlink's own mutations.
// It fails fast with WORKDIR_BUSY while an agent writer holds the lease and
// with WORKDIR_RECOVERY_REQUIRED while a dead writer's guard is there.
func (w *Workdirs) Mutation(alias string) (release func(), err error) {
	l, err := TryLock(w.lockPath(alias), Shared)
	if errors.Is(err, ErrBusy) {
		return nil, busy(alias)
	}
	if err != nil {
		return nil, errcode.New(errcode.Internal, "the workdir lease cannot be taken")
	}
	g, err := w.Guard(alias)
	if err != nil {
		l.Release()
		return nil, errcode.New(errcode.Internal, "the workdir's active-task guard cannot be read")
	}
	if g != nil {
		l.Release()
		return nil, recoveryRequired(*g)
	}
	return l.Release, nil
}

func busy(alias string) error {
	return errcode.New(CodeBusy, "an agent task is writing in workdir %q; try again when its turn ends", alias).
		With("workdir", alias)
}

func recoveryRequired(g Guard) error {
	return errcode.New(CodeRecoveryRequired,
		"an agent task (%s) was writing in workdir %q when its process ended; review the workdir, then run `hostlink agent recover %s`",
		g.TaskID, g.Alias, g.Alias).With("workdir", g.Alias).With("task_id", g.TaskID)
}

// Writer is an exclusive lease held for an agent turn.
type Writer struct {
	w     *Workdirs
	alias string
	lock  *Lock
}

// Writer takes alias's lease exclusively for the agent turn g and writes
// g as its guard. A guard left by another task is WORKDIR_RECOVERY_REQUIRED;
// one left by the same task (a turn being resumed) is taken over.
func (w *Workdirs) Writer(alias string, g Guard) (*Writer, error) {
	deadline := time.Now().Add(writerWait)
	var l *Lock
	for {
		var err error
		l, err = TryLock(w.lockPath(alias), Exclusive)
		if err == nil {
			break
		}
		if !errors.Is(err, ErrBusy) {
			return nil, errcode.New(errcode.Internal, "the workdir lease cannot be taken")
		}
		if time.Now().After(deadline) {
			return nil, busy(alias)
		}
		time.Sleep(20 * time.Millisecond)
	}
	old, err := w.Guard(alias)
	if err != nil {
		l.Release()
		return nil, errcode.New(errcode.Internal, "the workdir's active-task guard cannot be read")
	}
	if old != nil && old.TaskID != g.TaskID {
		l.Release()
		return nil, recoveryRequired(*old)
	}
	g.Alias = alias
	if err := w.writeGuard(alias, g); err != nil {
		l.Release()
		return nil, errcode.New(errcode.Internal, "the workdir's active-task guard cannot be written")
	}
	return &Writer{w: w, alias: alias, lock: l}, nil
}

// Release removes the guard, then releases the lease: the guard goes only
// after cleanup, and no one ever sees the lease free with a stale guard.
func (wr *Writer) Release() error {
	err := os.Remove(wr.w.guardPath(wr.alias))
	if errors.Is(err, fs.ErrNotExist) {
		err = nil
	}
	wr.lock.Release()
	return err
}

// Guard returns alias's guard, or nil if there is none.
func (w *Workdirs) Guard(alias string) (*Guard, error) {
	b, err := os.ReadFile(w.guardPath(alias))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var g Guard
	if err := json.Unmarshal(b, &g); err != nil {
		// A torn or foreign guard still means a writer was here.
		return &Guard{Alias: alias, TaskID: "unknown"}, nil
	}
	g.Alias = alias
	return &g, nil
}

func (w *Workdirs) writeGuard(alias string, g Guard) error {
	b, err := json.Marshal(g)
	if err != nil {
		return err
	}
	return private.WriteFile(w.guardPath(alias), b)
}

// Status is a workdir's lease state.
type Status struct {
	Busy  bool   // a live writer holds the lease (it takes precedence)
	Guard *Guard // a guard with no live lease: recovery required
}

// Check reports alias's state without keeping anything.
func (w *Workdirs) Check(alias string) (Status, error) {
	l, err := TryLock(w.lockPath(alias), Shared)
	if errors.Is(err, ErrBusy) {
		return Status{Busy: true}, nil
	}
	if err != nil {
		return Status{}, err
	}
	defer l.Release()
	g, err := w.Guard(alias)
	return Status{Guard: g}, err
}

// Orphans returns the guards that no live lease stands behind, by alias.
func (w *Workdirs) Orphans() ([]Guard, error) {
	ents, err := os.ReadDir(filepath.Join(w.dir, "active"))
	if err != nil {
		return nil, err
	}
	var out []Guard
	for _, e := range ents {
		alias, ok := strings.CutSuffix(e.Name(), ".json")
		if !ok || e.IsDir() {
			continue
		}
		st, err := w.Check(alias)
		if err != nil {
			return nil, err
		}
		if st.Guard != nil {
			out = append(out, *st.Guard)
		}
	}
	return out, nil
}

// Mark records what recovery found in alias's guard, if the guard is still
// there and no live lease holds it.
func (w *Workdirs) Mark(alias, reconciled string) error {
	l, err := TryLock(w.lockPath(alias), Exclusive)
	if err != nil {
		return err
	}
	defer l.Release()
	g, err := w.Guard(alias)
	if err != nil || g == nil {
		return err
	}
	g.Reconciled = reconciled
	return w.writeGuard(alias, *g)
}

// Clear removes alias's guard, which the user has reviewed. It fails with
// WORKDIR_BUSY while a live writer holds the lease. It returns the guard
// removed, or nil if there was none.
func (w *Workdirs) Clear(alias string) (*Guard, error) {
	l, err := TryLock(w.lockPath(alias), Exclusive)
	if errors.Is(err, ErrBusy) {
		return nil, busy(alias)
	}
	if err != nil {
		return nil, fmt.Errorf("workdir lease: %w", err)
	}
	defer l.Release()
	g, err := w.Guard(alias)
	if err != nil || g == nil {
		return nil, err
	}
	if err := os.Remove(w.guardPath(alias)); err != nil {
		return nil, err
	}
	return g, nil
}
