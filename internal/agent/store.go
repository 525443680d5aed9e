package agent

import (
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"time"

	"github.com/hostlink/hostlink/internal/agentapi"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/private"
	"github.com/hostlink/hostlink/internal/sqlitedb"
)

// dbName is the database inside the store's directory. Writers from
// several hostlink processes wait up to 10 s for each other; commits are
// not fsynced one by one (see sqlitedb.Options.FullSync), which about
// doubles the event rate and still survives any crash of hostlink.
const dbName = "agents.db"

// Store keeps tasks, their events and pending requests in SQLite. It may be
// open in several hostlink processes at once.
type Store struct {
	db *sql.DB
}

// OpenStore opens (creating privately) the store in dir and migrates it.
func OpenStore(dir string) (*Store, error) {
	if err := private.MkdirAll(dir); err != nil {
		return nil, fmt.Errorf("agent store: %w", err)
	}
	db, err := sqlitedb.Open(filepath.Join(dir, dbName), sqlitedb.Options{
		BusyTimeout: 10 * time.Second, ForeignKeys: true, Migrations: migrations,
	})
	if err != nil {
		return nil, fmt.Errorf("agent store: %w", err)
	}
	return &Store{db: db}, nil
}

// Close closes the database.
func (s *Store) Close() error { return s.db.Close() }

// Task is a stored task.
type Task struct {
	ID                string
	Created, Updated  time.Time
	Ended             time.Time // zero until terminal
	Status            Status
	Runtime           string
	Workdir           string
	Cwd               string
	Access            Access
	Model             string
	IdempotencyKey    string
	RequestSHA256     string
	Manifest          json.RawMessage
	ManifestSHA256    string
	PolicyFingerprint string
	Owner             string
	SessionID         string
	TurnID            string
	Turns             int
	LastSeq           int64
	Reason            string
	ResultBytes       int64 // -1 when there is no result
	ResultSHA256      string
}

// Pending request states.
const (
	ReqPending   = "pending"
	ReqAnswered  = "answered"
	ReqExpired   = "expired"
	ReqWithdrawn = "withdrawn"
)

// StoredRequest is an approval or question, pending or resolved.
type StoredRequest struct {
	ID         string
	TaskID     string
	RuntimeID  string
	Kind       string
	Status     string
	Created    time.Time
	Expires    time.Time
	Body       RequestBody
	Resolution json.RawMessage
}

// RequestBody is what a client is shown about a request.
type RequestBody struct {
	TurnID    string              `json:"turn_id,omitempty"`
	ItemID    string              `json:"item_id,omitempty"`
	Summary   string              `json:"summary,omitempty"`
	Detail    map[string]any      `json:"detail,omitempty"`
	Decisions []json.RawMessage   `json:"decisions,omitempty"`
	Questions []agentapi.Question `json:"questions,omitempty"`
}

// Change is one state change of a task, applied atomically: its status,
// fields and events commit together or not at all.
type Change struct {
	To        Status // "" keeps the status
	Reason    string
	SessionID string
	TurnID    string
	NewTurn   bool
	Owner     string
	Result    *ResultMeta
	Events    []agentapi.Event // Type, correlation ids and Data; the store numbers them
	Add       *StoredRequest
	Resolve   *Resolved
	// Wait: To is a waiting state, kept as is if the task already waits
	// (on an earlier request).
	Wait bool
	// Unwait: a waiting task with no pending request left (after Resolve
	// and WithdrawAll) goes back to running.
	Unwait bool
	// WithdrawAll withdraws every pending request of the task.
	WithdrawAll bool
}

// ResultMeta describes a spooled result.
type ResultMeta struct {
	Bytes  int64
	SHA256 string
}

// Resolved marks a request answered, expired or withdrawn. It applies only
// to a pending request; otherwise the change fails with the request's state.
type Resolved struct {
	ID         string
	Status     string
	Resolution json.RawMessage
}

func ms(t time.Time) int64 { return t.UnixMilli() }

func fromMS(v int64) time.Time { return time.UnixMilli(v).UTC() }

const taskCols = `id, created_at, updated_at, COALESCE(ended_at, 0), status, runtime, workdir, cwd, access, model,
	COALESCE(idempotency_key, ''), request_sha256, manifest, manifest_sha256, policy_fingerprint, owner,
	session_id, turn_id, turns, last_seq, reason, COALESCE(result_bytes, -1), COALESCE(result_sha256, '')`

type scanner interface{ Scan(...any) error }

func scanTask(r scanner) (Task, error) {
	var t Task
	var created, updated, ended int64
	var status, access, manifest string
	err := r.Scan(&t.ID, &created, &updated, &ended, &status, &t.Runtime, &t.Workdir, &t.Cwd, &access, &t.Model,
		&t.IdempotencyKey, &t.RequestSHA256, &manifest, &t.ManifestSHA256, &t.PolicyFingerprint, &t.Owner,
		&t.SessionID, &t.TurnID, &t.Turns, &t.LastSeq, &t.Reason, &t.ResultBytes, &t.ResultSHA256)
	if err != nil {
		return Task{}, err
	}
	t.Created, t.Updated = fromMS(created), fromMS(updated)
	if ended != 0 {
		t.Ended = fromMS(ended)
	}
	t.Access = Access(access)
	t.Manifest = json.RawMessage(manifest)
	t.Status, err = parseStatus(status)
	return t, err
}

// Create inserts a queued task with its first events. If the task has an
// idempotency key already used, it returns the existing task and existed
// set, or IDEMPOTENCY_CONFLICT when that task was a different request.
func (s *Store) Create(t Task, events []agentapi.Event) (Task, bool, error) {
	tx, err := s.db.Begin()
	if err != nil {
		return Task{}, false, err
	}
	defer tx.Rollback()
	if t.IdempotencyKey != "" {
		old, err := scanTask(tx.QueryRow(`SELECT `+taskCols+` FROM tasks WHERE idempotency_key = ?`, t.IdempotencyKey))
		switch {
		case err == nil && old.RequestSHA256 == t.RequestSHA256:
			return old, true, nil
		case err == nil:
			return Task{}, false, errcode.New(CodeIdempotencyConflict,
				"idempotency key %q was used for a different request (task %s)", t.IdempotencyKey, old.ID).With("task_id", old.ID)
		case !errors.Is(err, sql.ErrNoRows):
			return Task{}, false, err
		}
	}
	var key any
	if t.IdempotencyKey != "" {
		key = t.IdempotencyKey
	}
	_, err = tx.Exec(`INSERT INTO tasks (id, created_at, updated_at, status, runtime, workdir, cwd, access, model,
		idempotency_key, request_sha256, manifest, manifest_sha256, policy_fingerprint, owner)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
		t.ID, ms(t.Created), ms(t.Created), string(t.Status), t.Runtime, t.Workdir, t.Cwd, string(t.Access), t.Model,
		key, t.RequestSHA256, string(t.Manifest), t.ManifestSHA256, t.PolicyFingerprint, t.Owner)
	if err != nil {
		return Task{}, false, err
	}
	if _, err := appendEvents(tx, t.ID, t.Created, events); err != nil {
		return Task{}, false, err
	}
	got, err := scanTask(tx.QueryRow(`SELECT `+taskCols+` FROM tasks WHERE id = ?`, t.ID))
	if err != nil {
		return Task{}, false, err
	}
	return got, false, tx.Commit()
}

// appendEvents numbers and inserts events after the task's last one, and
// returns them as stored.
func appendEvents(tx *sql.Tx, id string, now time.Time, events []agentapi.Event) ([]agentapi.Event, error) {
	if len(events) == 0 {
		return nil, nil
	}
	var last int64
	if err := tx.QueryRow(`SELECT last_seq FROM tasks WHERE id = ?`, id).Scan(&last); err != nil {
		return nil, err
	}
	out := make([]agentapi.Event, len(events))
	for i, e := range events {
		last++
		e.SchemaVersion, e.TaskID, e.Seq, e.Time = agentapi.EventSchema, id, last, now.UTC()
		body, err := json.Marshal(e)
		if err != nil {
			return nil, err
		}
		if _, err := tx.Exec(`INSERT INTO events (task_id, seq, time, type, body) VALUES (?, ?, ?, ?, ?)`,
			id, e.Seq, ms(now), e.Type, string(body)); err != nil {
			return nil, err
		}
		out[i] = e
	}
	_, err := tx.Exec(`UPDATE tasks SET last_seq = ? WHERE id = ?`, last, id)
	return out, err
}

// Append appends events to task id in one transaction, numbering them
// after the task's last: the fast path for what a runtime streams.
func (s *Store) Append(id string, now time.Time, events []agentapi.Event) error {
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	var last int64
	err = tx.QueryRow(`UPDATE tasks SET last_seq = last_seq + ?, updated_at = ? WHERE id = ? RETURNING last_seq`,
		len(events), ms(now), id).Scan(&last)
	if errors.Is(err, sql.ErrNoRows) {
		return errcode.New(CodeTaskNotFound, "no task %q", id)
	}
	if err != nil {
		return err
	}
	seq := last - int64(len(events))
	for _, e := range events {
		seq++
		e.SchemaVersion, e.TaskID, e.Seq, e.Time = agentapi.EventSchema, id, seq, now.UTC()
		body, err := json.Marshal(e)
		if err != nil {
			return err
		}
		if _, err := tx.Exec(`INSERT INTO events (task_id, seq, time, type, body) VALUES (?, ?, ?, ?, ?)`,
			id, seq, ms(now), e.Type, string(body)); err != nil {
			return err
		}
	}
	return tx.Commit()
}

// Apply applies c to task id in one transaction, checking the transition
// against the state machine as stored (not as the caller last saw it).
func (s *Store) Apply(id string, now time.Time, c Change) (Task, []agentapi.Event, error) {
	tx, err := s.db.Begin()
	if err != nil {
		return Task{}, nil, err
	}
	defer tx.Rollback()
	cur, err := scanTask(tx.QueryRow(`SELECT `+taskCols+` FROM tasks WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Task{}, nil, errcode.New(CodeTaskNotFound, "no task %q", id)
	}
	if err != nil {
		return Task{}, nil, err
	}
	if c.Resolve != nil {
		if err := resolveRequest(tx, id, now, c.Resolve); err != nil {
			return Task{}, nil, err
		}
	}
	if c.WithdrawAll {
		evs, err := withdrawPending(tx, id, now, "the turn ended")
		if err != nil {
			return Task{}, nil, err
		}
		c.Events = append(c.Events, evs...)
	}
	waiting := cur.Status == WaitingApproval || cur.Status == WaitingInput
	if c.Wait && waiting {
		c.To = ""
	}
	if c.Unwait && waiting {
		var n int
		if err := tx.QueryRow(`SELECT count(*) FROM requests WHERE task_id = ? AND status = ?`, id, ReqPending).Scan(&n); err != nil {
			return Task{}, nil, err
		}
		if n == 0 {
			c.To = Running
		}
	}
	sets := []string{"updated_at = ?"}
	args := []any{ms(now)}
	if c.To != "" && c.To != cur.Status {
		if err := checkTransition(cur.Status, c.To); err != nil {
			return Task{}, nil, err
		}
		sets, args = append(sets, "status = ?"), append(args, string(c.To))
		if c.To.Terminal() {
			sets, args = append(sets, "ended_at = ?"), append(args, ms(now))
			// A finished task waits on nothing.
			evs, err := withdrawPending(tx, id, now, "the task is "+string(c.To))
			if err != nil {
				return Task{}, nil, err
			}
			c.Events = append(c.Events, evs...)
		}
		c.Events = append([]agentapi.Event{{Type: "task.status", SessionID: cur.SessionID, TurnID: firstNonEmpty(c.TurnID, cur.TurnID),
			Data: statusData(cur.Status, c.To, c.Reason)}}, c.Events...)
	}
	if c.Reason != "" {
		sets, args = append(sets, "reason = ?"), append(args, c.Reason)
	}
	if c.SessionID != "" {
		sets, args = append(sets, "session_id = ?"), append(args, c.SessionID)
	}
	if c.TurnID != "" {
		sets, args = append(sets, "turn_id = ?"), append(args, c.TurnID)
	}
	if c.NewTurn {
		sets = append(sets, "turns = turns + 1")
	}
	if c.Owner != "" {
		sets, args = append(sets, "owner = ?"), append(args, c.Owner)
	}
	if c.Result != nil {
		sets, args = append(sets, "result_bytes = ?", "result_sha256 = ?"), append(args, c.Result.Bytes, c.Result.SHA256)
	}
	if _, err := tx.Exec(`UPDATE tasks SET `+strings.Join(sets, ", ")+` WHERE id = ?`, append(args, id)...); err != nil {
		return Task{}, nil, err
	}
	if c.Add != nil {
		r := c.Add
		body, err := json.Marshal(r.Body)
		if err != nil {
			return Task{}, nil, err
		}
		if _, err := tx.Exec(`INSERT INTO requests (id, task_id, runtime_id, kind, status, created_at, expires_at, body)
			VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, r.ID, id, r.RuntimeID, r.Kind, ReqPending, ms(now), ms(r.Expires), string(body)); err != nil {
			return Task{}, nil, err
		}
	}
	evs, err := appendEvents(tx, id, now, c.Events)
	if err != nil {
		return Task{}, nil, err
	}
	got, err := scanTask(tx.QueryRow(`SELECT `+taskCols+` FROM tasks WHERE id = ?`, id))
	if err != nil {
		return Task{}, nil, err
	}
	return got, evs, tx.Commit()
}

// withdrawPending withdraws every pending request of task id and returns
// the request.withdrawn event that reports each, saying why.
func withdrawPending(tx *sql.Tx, id string, now time.Time, why string) ([]agentapi.Event, error) {
	rows, err := tx.Query(`SELECT id, kind FROM requests WHERE task_id = ? AND status = ? ORDER BY created_at, id`, id, ReqPending)
	if err != nil {
		return nil, err
	}
	var evs []agentapi.Event
	for rows.Next() {
		var rid, kind string
		if err := rows.Scan(&rid, &kind); err != nil {
			rows.Close()
			return nil, err
		}
		evs = append(evs, agentapi.Event{Type: "request.withdrawn", RequestID: rid, Data: map[string]any{"kind": kind, "reason": why}})
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	if _, err := tx.Exec(`UPDATE requests SET status = ?, resolved_at = ? WHERE task_id = ? AND status = ?`,
		ReqWithdrawn, ms(now), id, ReqPending); err != nil {
		return nil, err
	}
	return evs, nil
}

func statusData(from, to Status, reason string) map[string]any {
	d := map[string]any{"from": string(from), "to": string(to)}
	if reason != "" {
		d["reason"] = reason
	}
	return d
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

func resolveRequest(tx *sql.Tx, taskID string, now time.Time, r *Resolved) error {
	var status string
	var expires int64
	err := tx.QueryRow(`SELECT status, expires_at FROM requests WHERE id = ? AND task_id = ?`, r.ID, taskID).Scan(&status, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return errcode.New(CodeRequestNotFound, "task %s has no request %q", taskID, r.ID)
	}
	if err != nil {
		return err
	}
	if status != ReqPending {
		return requestStateError(r.ID, status)
	}
	if r.Status == ReqAnswered && ms(now) >= expires {
		return requestStateError(r.ID, ReqExpired)
	}
	var res any
	if r.Resolution != nil {
		res = string(r.Resolution)
	}
	_, err = tx.Exec(`UPDATE requests SET status = ?, resolution = ?, resolved_at = ? WHERE id = ?`, r.Status, res, ms(now), r.ID)
	return err
}

func requestStateError(id, status string) error {
	if status == ReqExpired {
		return errcode.New(CodeRequestExpired, "request %s expired before it was answered", id).With("status", status)
	}
	return errcode.New(CodeRequestResolved, "request %s is already %s", id, status).With("status", status)
}

// Get returns task id.
func (s *Store) Get(id string) (Task, error) {
	t, err := scanTask(s.db.QueryRow(`SELECT `+taskCols+` FROM tasks WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Task{}, errcode.New(CodeTaskNotFound, "no task %q", id)
	}
	return t, err
}

// Unfinished returns every task not in a terminal state.
func (s *Store) Unfinished() ([]Task, error) {
	rows, err := s.db.Query(`SELECT ` + taskCols + ` FROM tasks
		WHERE status NOT IN ('completed', 'failed', 'cancelled', 'interrupted') ORDER BY created_at`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Task
	for rows.Next() {
		t, err := scanTask(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, t)
	}
	return out, rows.Err()
}

// Events returns up to limit events of task id after seq after, in order.
func (s *Store) Events(id string, after int64, limit int) ([]agentapi.Event, error) {
	rows, err := s.db.Query(`SELECT body FROM events WHERE task_id = ? AND seq > ? ORDER BY seq LIMIT ?`, id, after, limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := []agentapi.Event{}
	for rows.Next() {
		var body string
		if err := rows.Scan(&body); err != nil {
			return nil, err
		}
		var e agentapi.Event
		if err := json.Unmarshal([]byte(body), &e); err != nil {
			return nil, err
		}
		out = append(out, e)
	}
	return out, rows.Err()
}

// Snapshot returns task id and its requests as of one moment: a status
// and the pending requests it implies are never read apart.
func (s *Store) Snapshot(id string) (Task, []StoredRequest, error) {
	tx, err := s.db.Begin()
	if err != nil {
		return Task{}, nil, err
	}
	defer tx.Rollback()
	t, err := scanTask(tx.QueryRow(`SELECT `+taskCols+` FROM tasks WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return Task{}, nil, errcode.New(CodeTaskNotFound, "no task %q", id)
	}
	if err != nil {
		return Task{}, nil, err
	}
	reqs, err := requests(tx, id, false)
	return t, reqs, err
}

type querier interface {
	Query(string, ...any) (*sql.Rows, error)
}

// Requests returns task id's requests (only pending ones if pending).
func (s *Store) Requests(id string, pending bool) ([]StoredRequest, error) {
	return requests(s.db, id, pending)
}

func requests(db querier, id string, pending bool) ([]StoredRequest, error) {
	q := `SELECT id, task_id, runtime_id, kind, status, created_at, expires_at, body, COALESCE(resolution, '') FROM requests WHERE task_id = ?`
	if pending {
		q += ` AND status = 'pending'`
	}
	rows, err := db.Query(q+` ORDER BY created_at, id`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []StoredRequest
	for rows.Next() {
		var r StoredRequest
		var created, expires int64
		var body, res string
		if err := rows.Scan(&r.ID, &r.TaskID, &r.RuntimeID, &r.Kind, &r.Status, &created, &expires, &body, &res); err != nil {
			return nil, err
		}
		r.Created, r.Expires = fromMS(created), fromMS(expires)
		if err := json.Unmarshal([]byte(body), &r.Body); err != nil {
			return nil, err
		}
		if res != "" {
			r.Resolution = json.RawMessage(res)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Request returns request rid of task id.
func (s *Store) Request(id, rid string) (StoredRequest, error) {
	all, err := s.Requests(id, false)
	if err != nil {
		return StoredRequest{}, err
	}
	for _, r := range all {
		if r.ID == rid {
			return r, nil
		}
	}
	return StoredRequest{}, errcode.New(CodeRequestNotFound, "task %s has no request %q", id, rid)
}

// CountActive returns how many tasks are not terminal.
func (s *Store) CountActive() (int, error) {
	var n int
	err := s.db.QueryRow(`SELECT count(*) FROM tasks WHERE status NOT IN ('completed', 'failed', 'cancelled', 'interrupted')`).Scan(&n)
	return n, err
}
