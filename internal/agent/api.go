package agent

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"path/filepath"
	"slices"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/hostlink/hostlink/internal/agentapi"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/lease"
)

// Page and chunk bounds.
const (
	defaultEvents    = 100
	maxEvents        = 500
	defaultChunk     = 64 << 10
	maxChunk         = 1 << 20
	maxIdempotentKey = 200
)

func (e *Engine) forget(r *run) {
	e.mu.Lock()
	defer e.mu.Unlock()
	delete(e.runs, r.t.ID)
	if e.writing[r.t.Workdir] == r.t.ID {
		delete(e.writing, r.t.Workdir)
	}
}

// doneWriting lets the next writer into r's workdir once r's lease is gone.
func (e *Engine) doneWriting(r *run) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.writing[r.t.Workdir] == r.t.ID {
		delete(e.writing, r.t.Workdir)
	}
}

// owned returns the run of task id if this process drives it, or the
// error explaining why a request that needs the runtime cannot be served.
func (e *Engine) owned(id string) (*run, error) {
	e.mu.Lock()
	r := e.runs[id]
	e.mu.Unlock()
	if r != nil {
		return r, nil
	}
	t, err := e.store.Get(id)
	if err != nil {
		return nil, err
	}
	if t.Status.Terminal() {
		return nil, errcode.New(CodeInvalidState, "task %s is %s", id, t.Status).With("status", string(t.Status))
	}
	return nil, errcode.New(CodeTaskElsewhere, "task %s is driven by another hostlink process; ask that one", id)
}

// Submit validates a task, records it with its manifest, and starts it. A
// repeated idempotency key returns the task it first created.
func (e *Engine) Submit(ctx context.Context, a agentapi.SubmitArgs) (Task, bool, error) {
	if a.Prompt == "" {
		return Task{}, false, errcode.New(errcode.InvalidArgument, "prompt is empty")
	}
	if len(a.Prompt) > e.o.Limits.MaxPromptBytes || !utf8.ValidString(a.Prompt) {
		return Task{}, false, errcode.New(errcode.InvalidArgument, "prompt must be UTF-8 of at most %d bytes", e.o.Limits.MaxPromptBytes)
	}
	if len(a.IdempotencyKey) > maxIdempotentKey {
		return Task{}, false, errcode.New(errcode.InvalidArgument, "idempotency_key is over %d bytes", maxIdempotentKey)
	}
	access := Access(a.Access)
	if access == "" {
		access = ReadOnly
	}
	// A workdir that does not exist is UNKNOWN_WORKDIR, as it is for the
	// file operations; only a configured one has an agent_mode.
	alias, err := e.workdir(a.Workdir)
	if err != nil {
		return Task{}, false, err
	}
	a.Workdir = alias
	p := e.policy(a.Workdir)
	switch {
	case p.Mode == ModeDisabled:
		return Task{}, false, errcode.New(CodeAgentNotAllowed, "agents are disabled in workdir %q (agent_mode)", a.Workdir)
	case access == WorkspaceWrite && p.Mode != ModeWorkspaceWrite:
		return Task{}, false, errcode.New(CodeAgentNotAllowed, "workdir %q allows agents read-only access only (agent_mode)", a.Workdir)
	case !e.allowed(a.Runtime, p):
		return Task{}, false, errcode.New(CodeRuntimeUnavailable, "runtime %q is not allowed in workdir %q", a.Runtime, a.Workdir)
	}
	cwd := a.Cwd
	if cwd == "" {
		cwd = "."
	}
	if filepath.IsAbs(cwd) || strings.HasPrefix(cwd, "/") || strings.HasPrefix(cwd, `\`) || filepath.VolumeName(cwd) != "" {
		return Task{}, false, errcode.New(errcode.InvalidArgument, "cwd must be relative to the workdir")
	}
	dir, err := e.o.Files.ResolveDir(a.Workdir, cwd)
	if err != nil {
		return Task{}, false, err
	}
	var cont string
	if a.ContinueTaskID != "" {
		prev, err := e.store.Get(a.ContinueTaskID)
		if err != nil {
			return Task{}, false, err
		}
		if prev.Runtime != a.Runtime || prev.Workdir != a.Workdir || prev.SessionID == "" || !prev.Status.Terminal() {
			return Task{}, false, errcode.New(CodeInvalidState,
				"task %s cannot be continued: it must be finished, have a runtime session, and share the runtime and workdir", prev.ID)
		}
		cont = prev.SessionID
	}
	req := map[string]any{"runtime": a.Runtime, "workdir": a.Workdir, "cwd": dir.Rel,
		"prompt": a.Prompt, "model": a.Model, "access": access}
	if cont != "" {
		req["continue"] = a.ContinueTaskID
	}
	reqSum, err := fingerprint(req)
	if err != nil {
		return Task{}, false, err
	}
	e.mu.Lock()
	closed := e.closed
	e.mu.Unlock()
	if closed {
		return Task{}, false, errcode.New(CodeRuntimeUnavailable, "hostlink is shutting down")
	}
	if a.IdempotencyKey == "" || !e.keyUsed(a.IdempotencyKey) {
		if n, err := e.store.CountActive(); err != nil {
			return Task{}, false, err
		} else if n >= e.o.Limits.MaxConcurrent {
			return Task{}, false, errcode.New(CodeTooManyTasks, "%d agent tasks are active (agents.max_concurrent_tasks)", n)
		}
		if access == WorkspaceWrite {
			if err := e.writable(a.Workdir); err != nil {
				return Task{}, false, err
			}
		}
		if !a.QueueIfNotReady {
			if err := e.checkReady(ctx, a.Runtime); err != nil {
				return Task{}, false, err
			}
		}
	}
	now := e.o.Now()
	id := newID("task_")
	promptSum := sha256.Sum256([]byte(a.Prompt))
	allowed := slices.DeleteFunc(slices.Clone(e.o.Allowed), func(n string) bool { return !e.allowed(n, p) })
	m := Manifest{TaskID: id, Created: now.UTC().Format(time.RFC3339Nano), HostlinkVersion: e.o.Version,
		Runtime: a.Runtime, Model: a.Model, Workdir: a.Workdir, Cwd: dir.Rel, Access: access,
		PromptSHA256: hex.EncodeToString(promptSum[:]), PromptBytes: len(a.Prompt),
		Policy: Policy{AgentMode: p.Mode, AllowedRuntimes: allowed,
			ApprovalTimeoutSec: int(e.o.Limits.ApprovalTimeout / time.Second),
			TurnTimeoutSec:     int(e.o.Limits.TurnTimeout / time.Second),
			MaxResultBytes:     e.o.Limits.MaxResultBytes}}
	canon, sum, err := m.seal()
	if err != nil {
		return Task{}, false, err
	}
	t := Task{ID: id, Created: now, Status: Queued, Runtime: a.Runtime, Workdir: a.Workdir, Cwd: dir.Rel,
		Access: access, Model: a.Model, IdempotencyKey: a.IdempotencyKey, RequestSHA256: reqSum,
		Manifest: canon, ManifestSHA256: sum, PolicyFingerprint: m.PolicySHA256, Owner: e.owner}
	root, err := e.o.Files.ResolveDir(a.Workdir, ".")
	if err != nil {
		return Task{}, false, err
	}
	red := redactor{root: root.Abs, alias: a.Workdir}
	// The prompt is stored redacted, as every event is, beside the hash
	// and length the manifest holds.
	queued := []agentapi.Event{{Type: "task.queued", Data: map[string]any{
		"runtime": a.Runtime, "workdir": a.Workdir, "cwd": dir.Rel, "access": string(access), "model": a.Model,
		"prompt": a.Prompt, "prompt_sha256": m.PromptSHA256, "prompt_bytes": m.PromptBytes,
		"manifest_sha256": sum, "policy_fingerprint": m.PolicySHA256}}}
	red.events(queued)
	t, existed, err := e.store.Create(t, queued)
	if err != nil || existed {
		return t, existed, err
	}
	r := e.newRun(t, a.Prompt, SessionSpec{TaskID: id, Dir: dir.Abs, Model: a.Model, Access: access, StateDir: e.runtimeDir(a.Runtime), Continue: cont}, root.Abs)
	e.mu.Lock()
	e.runs[id] = r
	if access == WorkspaceWrite {
		e.writing[a.Workdir] = id
	}
	e.wg.Add(1)
	e.mu.Unlock()
	go r.drive()
	return t, false, nil
}

// workdir returns the configured workdir's alias as configured, or
// UNKNOWN_WORKDIR.
func (e *Engine) workdir(alias string) (string, error) {
	if alias == "" {
		return "", errcode.New(errcode.InvalidArgument, "workdir is required")
	}
	for _, wd := range e.o.Files.Workdirs() {
		if strings.EqualFold(wd.Alias, alias) {
			return wd.Alias, nil
		}
	}
	return "", errcode.New(errcode.UnknownWorkdir, "no workdir named %q", alias)
}

func (e *Engine) keyUsed(key string) bool {
	var n int
	e.store.db.QueryRow(`SELECT count(*) FROM tasks WHERE idempotency_key = ?`, key).Scan(&n)
	return n > 0
}

// writable refuses a second writer early: one in this process, a live
// lease in another, or a dead writer's guard.
func (e *Engine) writable(alias string) error {
	e.mu.Lock()
	other := e.writing[alias]
	e.mu.Unlock()
	if other != "" {
		return errcode.New(lease.CodeBusy, "task %s is writing in workdir %q", other, alias).With("task_id", other)
	}
	st, err := e.leases.Check(alias)
	if err != nil {
		return err
	}
	if st.Busy {
		return errcode.New(lease.CodeBusy, "an agent task is writing in workdir %q", alias)
	}
	if st.Guard != nil {
		return errcode.New(lease.CodeRecoveryRequired,
			"an agent task (%s) was writing in workdir %q when its process ended; run `hostlink agent recover %s`",
			st.Guard.TaskID, alias, alias).With("task_id", st.Guard.TaskID)
	}
	return nil
}

// Running returns the tasks this process drives, oldest first.
func (e *Engine) Running() []Task {
	e.mu.Lock()
	ids := make([]string, 0, len(e.runs))
	for id := range e.runs {
		ids = append(ids, id)
	}
	e.mu.Unlock()
	var out []Task
	for _, id := range ids {
		if t, err := e.store.Get(id); err == nil && !t.Status.Terminal() {
			out = append(out, t)
		}
	}
	slices.SortFunc(out, func(a, b Task) int { return a.Created.Compare(b.Created) })
	return out
}

// Get returns a task and its requests.
func (e *Engine) Get(id string) (Task, []StoredRequest, error) { return e.store.Snapshot(id) }

// Events returns a page of task id's events after seq after.
func (e *Engine) Events(id string, after int64, limit int) ([]agentapi.Event, Task, error) {
	t, err := e.store.Get(id)
	if err != nil {
		return nil, Task{}, err
	}
	if limit <= 0 {
		limit = defaultEvents
	}
	evs, err := e.store.Events(id, after, min(limit, maxEvents))
	return evs, t, err
}

// Result returns a chunk of task id's result.
func (e *Engine) Result(id string, offset int64, max int) ([]byte, int64, Task, error) {
	t, err := e.store.Get(id)
	if err != nil {
		return nil, 0, Task{}, err
	}
	if t.ResultBytes < 0 {
		return nil, 0, t, errcode.New(CodeResultUnavailable, "task %s has no result (it is %s)", id, t.Status).With("status", string(t.Status))
	}
	if offset < 0 || offset > t.ResultBytes {
		return nil, 0, t, errcode.New(errcode.InvalidArgument, "offset %d is outside the result's %d bytes", offset, t.ResultBytes)
	}
	if max <= 0 {
		max = defaultChunk
	}
	b, next, err := e.spool.read(id, offset, min(max, maxChunk))
	return b, next, t, err
}

// pendingOf checks that request rid of task id is a pending request of
// kind, expiring it if its time is up.
func (e *Engine) pendingOf(id, rid, kind string) (*run, StoredRequest, error) {
	r, err := e.owned(id)
	if err != nil {
		// A request of a finished task says best why it cannot be answered.
		if sr, rerr := e.store.Request(id, rid); rerr == nil && sr.Status != ReqPending {
			return nil, StoredRequest{}, requestStateError(rid, sr.Status)
		}
		return nil, StoredRequest{}, err
	}
	sr, err := e.pendingIn(r, rid, kind)
	return r, sr, err
}

func (e *Engine) pendingIn(r *run, rid, kind string) (StoredRequest, error) {
	sr, err := e.store.Request(r.t.ID, rid)
	if err != nil {
		return StoredRequest{}, err
	}
	if sr.Kind != kind {
		return StoredRequest{}, errcode.New(errcode.InvalidArgument, "request %s is a %s, not a %s", rid, sr.Kind, kind)
	}
	if sr.Status != ReqPending {
		return StoredRequest{}, requestStateError(rid, sr.Status)
	}
	if !e.o.Now().Before(sr.Expires) {
		r.expire(rid)
		return StoredRequest{}, requestStateError(rid, ReqExpired)
	}
	return sr, nil
}

// Respond answers an approval with one of the decisions the runtime
// offered, passed back to it exactly as offered.
func (e *Engine) Respond(id, rid string, decision any) error {
	r, sr, err := e.pendingOf(id, rid, KindApproval)
	if err != nil {
		return err
	}
	want, err := canonicalJSON(decision)
	if err != nil || decision == nil {
		return errcode.New(errcode.InvalidArgument, "decision must be one of the offered decisions")
	}
	for _, offered := range sr.Body.Decisions {
		var v any
		if json.Unmarshal(offered, &v) != nil {
			continue
		}
		if c, err := canonicalJSON(v); err != nil || string(c) != string(want) {
			continue
		}
		if v != "cancel" {
			return r.resolve(rid, KindApproval, Resolution{Decision: offered}, v)
		}
		// cancel ends the turn, and the task is cancelled, on every
		// runtime: however the runtime takes it (Codex interrupts the
		// turn, Claude aborts it, Qoder goes on), hostlink interrupts the
		// turn and ends the runtime if it does not stop in the grace.
		const why = "cancelled by the answer to an approval"
		r.cancelling(why)
		err := r.resolve(rid, KindApproval, Resolution{Decision: offered}, v)
		r.cancel(why)
		return err
	}
	return errcode.New(CodeDecisionNotOffered, "that decision is not one the runtime offered").With("offered", sr.Body.Decisions)
}

// Answer answers a question request: every question, each with answers
// among its options unless it accepts other text.
func (e *Engine) Answer(id, rid string, answers map[string][]string) error {
	r, sr, err := e.pendingOf(id, rid, KindQuestion)
	if err != nil {
		return err
	}
	for qid := range answers {
		if !slices.ContainsFunc(sr.Body.Questions, func(q agentapi.Question) bool { return q.ID == qid }) {
			return errcode.New(errcode.InvalidArgument, "request %s has no question %q", rid, qid)
		}
	}
	for _, q := range sr.Body.Questions {
		got, ok := answers[q.ID]
		if !ok || len(got) == 0 {
			return errcode.New(errcode.InvalidArgument, "question %q is not answered", q.ID)
		}
		if q.Other || len(q.Options) == 0 {
			continue
		}
		for _, a := range got {
			if !slices.Contains(q.Options, a) {
				return errcode.New(errcode.InvalidArgument, "%q is not an option of question %q", a, q.ID).With("options", q.Options)
			}
		}
	}
	record := answers
	if slices.ContainsFunc(sr.Body.Questions, func(q agentapi.Question) bool { return q.Secret }) {
		record = map[string][]string{} // secret answers go to the runtime, not the event log
		for _, q := range sr.Body.Questions {
			if q.Secret {
				record[q.ID] = []string{"[secret]"}
			} else {
				record[q.ID] = answers[q.ID]
			}
		}
	}
	return r.resolve(rid, KindQuestion, Resolution{Answers: answers}, record)
}

// Send steers the running turn or queues a follow-up turn.
func (e *Engine) Send(id, text, mode string) error {
	if text == "" || len(text) > e.o.Limits.MaxPromptBytes || !utf8.ValidString(text) {
		return errcode.New(errcode.InvalidArgument, "text must be UTF-8 of 1 to %d bytes", e.o.Limits.MaxPromptBytes)
	}
	r, err := e.owned(id)
	if err != nil {
		return err
	}
	r.mu.Lock()
	if r.ending || r.cancelWhy != "" || r.failWhy != "" {
		r.mu.Unlock()
		return errcode.New(CodeInvalidState, "task %s is ending", id)
	}
	sess, turn := r.sess, r.turnID
	if mode == agentapi.MessageFollowUp {
		r.followUps = append(r.followUps, text)
	}
	r.mu.Unlock()
	if mode == agentapi.MessageFollowUp {
		return r.apply(Change{Events: []agentapi.Event{{Type: "message.queued", Data: map[string]any{"text": text}}}})
	}
	if sess == nil || turn == "" {
		return errcode.New(CodeInvalidState, "task %s has no running turn to steer yet", id)
	}
	ctx, cancel := context.WithTimeout(e.ctx, callTimeout)
	defer cancel()
	if err := sess.Steer(ctx, turn, text); err != nil {
		return errcode.New(CodeInvalidState, "the runtime did not take the message: %s", errcode.As(err).Message)
	}
	return r.apply(Change{Events: []agentapi.Event{{Type: "message.steered", SessionID: sess.ID(), TurnID: turn, Data: map[string]any{"text": text}}}})
}

// Cancel asks the task's turn to stop; the task becomes cancelled once the
// runtime has stopped (or been killed after the grace period).
func (e *Engine) Cancel(id string) (Task, error) {
	r, err := e.owned(id)
	if err != nil {
		if t, gerr := e.store.Get(id); gerr == nil && t.Status == Cancelled {
			return t, nil
		}
		return Task{}, err
	}
	r.cancel("cancelled by request")
	return e.store.Get(id)
}

// Runtimes probes every runtime the engine knows or allows.
func (e *Engine) Runtimes(ctx context.Context) []agentapi.RuntimeInfo {
	names := slices.Clone(e.o.Allowed)
	for n := range e.o.Runtimes {
		if !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	slices.Sort(names)
	out := make([]agentapi.RuntimeInfo, 0, len(names))
	for _, n := range names {
		info := agentapi.RuntimeInfo{Name: n, Allowed: slices.Contains(e.o.Allowed, n)}
		if _, ok := e.o.Runtimes[n]; !ok {
			info.Reason = "this build has no adapter for it"
		} else if !info.Allowed {
			info.Reason = "not in agents.runtimes"
		} else if rt, err := e.runtime(n); err != nil {
			info.Reason = errcode.As(err).Message
		} else {
			info.Readiness = e.probe(ctx, n, rt)
		}
		out = append(out, info)
	}
	return out
}
