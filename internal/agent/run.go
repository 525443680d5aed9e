package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"sync"
	"time"

	"github.com/hostlink/hostlink/internal/agentapi"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/lease"
)

// run drives one task in this process: it takes the workdir lease, starts
// the runtime session, and turns everything the runtime reports (as the
// task's Sink) into state changes and events in the store.
type run struct {
	e      *Engine
	t      Task
	prompt string
	spec   SessionSpec
	red    redactor
	writer *lease.Writer

	startMu   sync.Mutex // orders a turn's turn.started before its other events
	mu        sync.Mutex
	sess      Session
	turnID    string
	starting  bool // a turn was asked for and is not recorded as started yet
	ending    bool
	cancelWhy string // set by cancel: the turn's end becomes cancelled
	failWhy   string // set by an expiry or timeout: the turn's end becomes failed
	followUps []string
	pending   map[string]*pendingReq // by hostlink request id
	byRuntime map[string]string      // runtime request id → hostlink id
	timers    []*time.Timer          // the cancel grace timer
	turnTimer *time.Timer            // the running turn's deadline
	abort     context.CancelFunc     // while the runtime starts: gives up starting it
	endc      chan ending
	ended     chan struct{}
}

// callTimeout bounds a call on a running runtime (starting one is bounded
// by Limits.StartTimeout: it can take many seconds, Qoder's 17 s offline).
const callTimeout = time.Minute

type pendingReq struct {
	id, runtimeID, kind string
	timer               *time.Timer
}

// ending is how the run ends: the final state and, for a completed turn,
// its result.
type ending struct {
	to     Status
	reason string
	result *string
}

func (e *Engine) newRun(t Task, prompt string, spec SessionSpec, root string) *run {
	return &run{
		e: e, t: t, prompt: prompt, spec: spec,
		red:       redactor{root: root, alias: t.Workdir},
		pending:   map[string]*pendingReq{},
		byRuntime: map[string]string{},
		endc:      make(chan ending, 1),
		ended:     make(chan struct{}),
	}
}

// apply records a change of the task. The store, not the run, knows the
// task's status: changes come from the runtime's goroutine, from clients
// and from timers, and each is checked against the state as committed.
func (r *run) apply(c Change) error {
	r.red.events(c.Events)
	_, _, err := r.e.store.Apply(r.t.ID, r.e.o.Now(), c)
	return err
}

// appendEvents records events that change nothing else.
func (r *run) appendEvents(events ...agentapi.Event) error {
	r.red.events(events)
	return r.e.store.Append(r.t.ID, r.e.o.Now(), events)
}

// drive runs the task to its end.
func (r *run) drive() {
	defer r.e.wg.Done()
	defer r.e.forget(r)
	if err := r.apply(Change{To: Starting}); err != nil {
		r.settle(ending{to: Failed, reason: "the task could not start: " + errcode.As(err).Message})
		return
	}
	r.mu.Lock()
	why := r.cancelWhy
	r.mu.Unlock()
	if why != "" {
		r.settle(ending{to: Cancelled, reason: why})
		return
	}
	if r.t.Access == WorkspaceWrite {
		w, err := r.e.leases.Writer(r.t.Workdir, lease.Guard{TaskID: r.t.ID, Owner: r.e.owner, PID: os.Getpid(), Started: r.e.o.Now().UTC()})
		if err != nil {
			r.settle(ending{to: Failed, reason: errcode.As(err).Message})
			return
		}
		r.writer = w
	}
	rt, err := r.e.runtime(r.t.Runtime)
	if err != nil {
		r.settle(ending{to: Failed, reason: errcode.As(err).Message})
		return
	}
	limit := r.e.o.Limits.StartTimeout
	ctx, cancel := context.WithTimeout(r.e.ctx, limit)
	r.mu.Lock()
	r.abort = cancel // a cancel while starting gives up at once
	why = r.cancelWhy
	r.mu.Unlock()
	if why != "" {
		cancel()
	}
	var sess Session
	if r.spec.Continue != "" {
		sess, _, err = rt.Resume(ctx, r.spec, r.spec.Continue, r)
	} else {
		sess, err = rt.Start(ctx, r.spec, r)
	}
	r.mu.Lock()
	r.abort = nil
	r.mu.Unlock()
	timedOut := errors.Is(ctx.Err(), context.DeadlineExceeded)
	cancel()
	if err != nil {
		if sess != nil {
			sess.Close()
		}
		r.mu.Lock()
		why := r.cancelWhy
		r.mu.Unlock()
		switch {
		case why != "":
			r.settle(ending{to: Cancelled, reason: why})
		case timedOut:
			r.settle(ending{to: Failed, reason: fmt.Sprintf("the runtime did not start within %s (%s)", limit, StartTimeoutKey)})
		default:
			r.settle(ending{to: Failed, reason: "the runtime did not start: " + r.red.string(errcode.As(err).Message)})
		}
		return
	}
	r.mu.Lock()
	r.sess = sess
	why = r.cancelWhy
	r.mu.Unlock()
	if why != "" {
		r.settle(ending{to: Cancelled, reason: why})
		return
	}
	if err := r.apply(Change{To: Running, SessionID: sess.ID(),
		Events: []agentapi.Event{{Type: "session.started", SessionID: sess.ID(), Data: map[string]any{"runtime": r.t.Runtime}}}}); err != nil {
		r.settle(ending{to: Failed, reason: "the task state could not be recorded"})
		return
	}
	r.startTurn(r.prompt)
	r.settle(<-r.endc)
}

// end asks drive to settle the run; the first ending wins.
func (r *run) end(en ending) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ending {
		return
	}
	r.ending = true
	r.endc <- en
}

// settle ends the run: spool the result, end the runtime process, release
// the lease (removing the guard), then commit the final state. A crash
// before the commit leaves a task that start-up recovery reconciles.
func (r *run) settle(en ending) {
	r.mu.Lock()
	r.ending = true
	for _, t := range r.timers {
		t.Stop()
	}
	if r.turnTimer != nil {
		r.turnTimer.Stop()
	}
	for _, p := range r.pending {
		p.timer.Stop()
	}
	sess := r.sess
	r.mu.Unlock()
	var meta *ResultMeta
	var events []agentapi.Event
	if en.result != nil {
		m, truncated, err := r.e.spool.put(r.t.ID, r.red.string(*en.result), r.e.o.Limits.MaxResultBytes)
		if err != nil {
			en = ending{to: Failed, reason: "the result could not be stored"}
		} else {
			meta = &m
			r.mu.Lock()
			sid := r.sessionID()
			r.mu.Unlock()
			events = append(events, agentapi.Event{Type: "task.result", SessionID: sid,
				Data: map[string]any{"bytes": m.Bytes, "sha256": m.SHA256, "truncated": truncated}})
		}
	}
	if sess != nil {
		sess.Close()
	}
	if r.writer != nil {
		r.writer.Release()
	}
	r.e.doneWriting(r)
	if en.to == Completed {
		r.apply(Change{WithdrawAll: true, Unwait: true})
	}
	r.apply(Change{To: en.to, Reason: en.reason, Result: meta, Events: events})
	close(r.ended)
}

func (r *run) later(d time.Duration, f func()) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.timers = append(r.timers, time.AfterFunc(d, f))
}

// startTurn starts a turn with input. It may run on the adapter's
// goroutine's behalf, so it never holds r.mu across the runtime call.
func (r *run) startTurn(input string) {
	r.mu.Lock()
	sess := r.sess
	r.starting = true
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(r.e.ctx, callTimeout)
	turnID, err := sess.StartTurn(ctx, input)
	cancel()
	if err != nil {
		r.mu.Lock()
		r.starting = false
		r.mu.Unlock()
		r.end(ending{to: Failed, reason: "the runtime refused the turn: " + errcode.As(err).Message})
		return
	}
	r.began(turnID)
}

// began records turn id as started, once, before anything else of it:
// the runtime may report on a turn, and even end it, before StartTurn
// has returned its id, and whichever of the two comes first records it.
// A report on the previous turn while the next one starts is not a start.
func (r *run) began(turnID string) {
	if turnID == "" {
		return
	}
	r.startMu.Lock()
	defer r.startMu.Unlock()
	r.mu.Lock()
	fresh := r.starting && turnID != r.turnID && !r.ending
	if fresh {
		r.starting = false
		r.turnID = turnID
	}
	sid, why := r.sessionID(), r.cancelWhy
	r.mu.Unlock()
	if !fresh {
		return
	}
	r.apply(Change{TurnID: turnID, NewTurn: true, Events: []agentapi.Event{{Type: "turn.started", SessionID: sid, TurnID: turnID}}})
	r.mu.Lock()
	if r.turnTimer != nil {
		r.turnTimer.Stop()
	}
	if !r.ending {
		r.turnTimer = time.AfterFunc(r.e.o.Limits.TurnTimeout, func() { r.stop("", "the turn took longer than turn_timeout_seconds") })
	}
	r.mu.Unlock()
	if why != "" {
		r.stop(why, "")
	}
}

// stop interrupts the running turn; the turn's end becomes cancelled (with
// cancelWhy) or failed (with failWhy). If the runtime does not end the
// turn within the grace period, the run ends anyway and its process is
// killed.
func (r *run) stop(cancelWhy, failWhy string) {
	r.mu.Lock()
	if r.ending {
		r.mu.Unlock()
		return
	}
	if r.cancelWhy == "" && r.failWhy == "" {
		r.cancelWhy, r.failWhy = cancelWhy, failWhy
	}
	sess, turn, abort := r.sess, r.turnID, r.abort
	to, why := Cancelled, r.cancelWhy
	if why == "" {
		to, why = Failed, r.failWhy
	}
	r.mu.Unlock()
	if sess == nil && abort != nil {
		abort() // starting: give up, and drive settles the task
		return
	}
	if sess == nil || turn == "" {
		return // drive or startTurn sees cancelWhy once the runtime answers
	}
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), r.e.o.Limits.CancelGrace)
		defer cancel()
		sess.Interrupt(ctx, turn)
	}()
	r.later(r.e.o.Limits.CancelGrace, func() { r.end(ending{to: to, reason: why}) })
}

func (r *run) cancel(why string) { r.stop(why, "") }

// cancelling makes the turn's end, however it comes, cancelled with why
// (unless it already ends otherwise), before anything is asked of the
// runtime: an answer that ends the turn must find it set.
func (r *run) cancelling(why string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cancelWhy == "" && r.failWhy == "" {
		r.cancelWhy = why
	}
}

// The Sink side: calls arrive from the adapter, in order.

func (r *run) Item(it Item) {
	r.began(it.TurnID)
	r.mu.Lock()
	r.saw(it.TurnID)
	ending := r.ending
	sid := r.sessionID()
	r.mu.Unlock()
	if ending {
		return
	}
	d := map[string]any{"kind": it.Kind}
	if it.Text != "" {
		d["text"] = r.red.string(it.Text)
	}
	if len(it.Data) > 0 {
		d["data"] = r.red.value(it.Data)
	}
	r.appendEvents(agentapi.Event{Type: "item." + it.Phase, SessionID: sid, TurnID: it.TurnID, ItemID: it.ItemID, Data: d})
}

// saw notes the turn the runtime reports on: it may report before
// StartTurn has returned the turn's id. r.mu is held.
func (r *run) saw(turnID string) {
	if turnID != "" && !r.ending {
		r.turnID = turnID
	}
}

// sessionID is the session's id; r.mu is held.
func (r *run) sessionID() string {
	if r.sess == nil {
		return ""
	}
	return r.sess.ID()
}

func (r *run) Request(req Request) {
	now := r.e.o.Now()
	id := newID("req_")
	body := RequestBody{TurnID: req.TurnID, ItemID: req.ItemID, Summary: r.red.string(req.Summary), Questions: r.red.questions(req.Questions)}
	if len(req.Detail) > 0 {
		body.Detail = r.red.value(req.Detail).(map[string]any)
	}
	body.Decisions = req.Decisions
	to, typ := WaitingApproval, "approval.requested"
	if req.Kind == KindQuestion {
		to, typ = WaitingInput, "question.asked"
	}
	r.began(req.TurnID)
	r.mu.Lock()
	if r.ending {
		r.mu.Unlock()
		return
	}
	r.saw(req.TurnID)
	p := &pendingReq{id: id, runtimeID: req.ID, kind: req.Kind}
	r.pending[id] = p
	r.byRuntime[req.ID] = id
	p.timer = time.AfterFunc(r.e.o.Limits.ApprovalTimeout, func() { r.expire(id) })
	sid := r.sessionID()
	r.mu.Unlock()
	data := map[string]any{"kind": req.Kind, "expires": now.Add(r.e.o.Limits.ApprovalTimeout).UTC(), "request": body}
	r.apply(Change{To: to, Wait: true, Add: &StoredRequest{ID: id, RuntimeID: req.ID, Kind: req.Kind, Expires: now.Add(r.e.o.Limits.ApprovalTimeout), Body: body},
		Events: []agentapi.Event{{Type: typ, SessionID: sid, TurnID: req.TurnID, ItemID: req.ItemID, RequestID: id, Data: data}}})
}

// take removes pending request id, or returns nil if it is not pending.
func (r *run) take(id string) *pendingReq {
	r.mu.Lock()
	defer r.mu.Unlock()
	p := r.pending[id]
	if p == nil {
		return nil
	}
	delete(r.pending, id)
	delete(r.byRuntime, p.runtimeID)
	p.timer.Stop()
	return p
}

func (r *run) Withdraw(runtimeID string) {
	r.mu.Lock()
	id := r.byRuntime[runtimeID]
	r.mu.Unlock()
	p := r.take(id)
	if p == nil {
		return
	}
	r.apply(Change{Unwait: true, Resolve: &Resolved{ID: id, Status: ReqWithdrawn},
		Events: []agentapi.Event{{Type: "request.withdrawn", RequestID: id, Data: map[string]any{"kind": p.kind, "reason": "the runtime withdrew it"}}}})
}

// expire fails the request closed: it is marked expired and the turn is
// interrupted, so the runtime never proceeds on a guess.
func (r *run) expire(id string) {
	p := r.take(id)
	if p == nil {
		return
	}
	r.apply(Change{Resolve: &Resolved{ID: id, Status: ReqExpired},
		Events: []agentapi.Event{{Type: "request.expired", RequestID: id, Data: map[string]any{"kind": p.kind}}}})
	r.stop("", "the "+p.kind+" "+id+" expired unanswered")
}

func (r *run) TurnEnded(te TurnEnd) {
	r.began(te.TurnID)
	r.mu.Lock()
	if r.ending {
		r.mu.Unlock()
		return
	}
	cancelWhy, failWhy := r.cancelWhy, r.failWhy
	if r.turnTimer != nil {
		r.turnTimer.Stop()
	}
	var next string
	if te.Status == TurnCompleted && cancelWhy == "" && failWhy == "" && len(r.followUps) > 0 {
		next, r.followUps = r.followUps[0], r.followUps[1:]
	}
	sid := r.sessionID()
	r.mu.Unlock()
	d := map[string]any{"status": string(te.Status)}
	if te.Error != "" {
		d["error"] = r.red.string(te.Error)
	}
	r.apply(Change{WithdrawAll: true, Unwait: true, Events: []agentapi.Event{{Type: "turn.ended", SessionID: sid, TurnID: te.TurnID, Data: d}}})
	switch {
	case cancelWhy != "":
		r.end(ending{to: Cancelled, reason: cancelWhy})
	case failWhy != "":
		r.end(ending{to: Failed, reason: failWhy})
	case next != "":
		// StartTurn waits on the adapter's goroutine, which is calling us.
		go r.startTurn(next)
	case te.Status == TurnCompleted:
		res := te.Result
		r.end(ending{to: Completed, result: &res})
	case te.Status == TurnInterrupted:
		r.end(ending{to: Interrupted, reason: "the runtime interrupted the turn"})
	default:
		r.end(ending{to: Failed, reason: "the turn failed: " + r.red.string(te.Error)})
	}
}

func (r *run) Exited(err error) {
	r.mu.Lock()
	why := r.cancelWhy
	r.mu.Unlock()
	if why != "" {
		r.end(ending{to: Cancelled, reason: why})
		return
	}
	reason := "the runtime process exited mid-turn"
	if err != nil {
		reason += ": " + r.red.string(err.Error())
	}
	r.end(ending{to: Failed, reason: reason})
}

// resolve claims pending request id for an answer, records it, and
// delivers it to the runtime.
func (r *run) resolve(id, kind string, res Resolution, record any) error {
	p := r.take(id)
	if p == nil {
		if sr, err := r.e.store.Request(r.t.ID, id); err == nil && sr.Status != ReqPending {
			return requestStateError(id, sr.Status)
		}
		return errcode.New(CodeRequestResolved, "request %s is already resolved", id)
	}
	raw, _ := json.Marshal(record)
	typ := "approval.resolved"
	if kind == KindQuestion {
		typ = "question.answered"
	}
	if err := r.apply(Change{Unwait: true, Resolve: &Resolved{ID: id, Status: ReqAnswered, Resolution: raw},
		Events: []agentapi.Event{{Type: typ, RequestID: id, Data: map[string]any{"resolution": record}}}}); err != nil {
		return err
	}
	r.mu.Lock()
	sess := r.sess
	r.mu.Unlock()
	ctx, cancel := context.WithTimeout(r.e.ctx, callTimeout)
	defer cancel()
	if err := sess.Resolve(ctx, p.runtimeID, res); err != nil {
		r.apply(Change{Events: []agentapi.Event{{Type: "request.delivery_failed", RequestID: id}}})
		r.stop("", "the answer to "+id+" could not be delivered to the runtime")
		return errcode.New(CodeRuntimeUnavailable, "the runtime did not take the answer; the turn is being stopped")
	}
	return nil
}
