package capture

import (
	"bufio"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/private"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// bufferSize bounds the memory each stream holds between the command and
// its file. Writes of at least this size go to the file directly.
const bufferSize = 64 << 10

// Capture is an active capture: the writer side of one command's output.
type Capture struct {
	s      *Store
	id     string
	stdout *stream
	stderr *stream

	failMu     sync.Mutex
	failReason string // first storage failure; "" if none

	finishMu sync.Mutex
	finished bool
}

// Create records a new capture and creates its stream files, before the
// command starts. An error means nothing may be run: the store cannot hold
// the output (code CAPTURE_UNAVAILABLE).
//
// If meta.IdempotencyKey is set and a capture already has that key, Create
// returns that capture's Info and a nil *Capture instead, and the caller
// must not run the command again. The key is a unique column, so of two
// concurrent Creates with one key exactly one gets a Capture.
func (s *Store) Create(meta Meta) (*Capture, *Info, error) {
	if meta.IdempotencyKey != "" {
		if info, ok, err := s.FindByIdempotencyKey(meta.IdempotencyKey); err != nil {
			return nil, nil, unavailable(err)
		} else if ok {
			return nil, info, nil
		}
	}
	id := newID()
	if err := s.insert(id, meta); err != nil {
		if meta.IdempotencyKey != "" && isUniqueViolation(err) {
			// Lost a race with a Create using the same key.
			info, ok, ferr := s.FindByIdempotencyKey(meta.IdempotencyKey)
			if ferr == nil && ok {
				return nil, info, nil
			}
		}
		return nil, nil, unavailable(err)
	}
	c := &Capture{s: s, id: id}
	if err := c.openStreams(); err != nil {
		c.closeStreams()
		s.remove(id)
		return nil, nil, unavailable(err)
	}
	s.mu.Lock()
	closed := s.closed
	if !closed {
		s.active[id] = c
	}
	s.mu.Unlock()
	if closed {
		c.closeStreams()
		s.remove(id)
		return nil, nil, unavailable(errors.New("store closed"))
	}
	return c, nil, nil
}

func (s *Store) insert(id string, meta Meta) error {
	var argv any // NULL for a shell command
	if meta.Argv != nil {
		b, err := json.Marshal(meta.Argv)
		if err != nil {
			return err
		}
		argv = string(b)
	}
	envKeys, err := json.Marshal(nonNil(meta.EnvKeys))
	if err != nil {
		return err
	}
	var key, sandbox, root any
	if meta.IdempotencyKey != "" {
		key = meta.IdempotencyKey
	}
	if meta.Sandbox != "" {
		sandbox = meta.Sandbox
	}
	if meta.Root != "" {
		root = meta.Root
	}
	now := s.now()
	tx, err := s.db.Begin()
	if err != nil {
		return err
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`INSERT INTO captures (id, op, argv, command, shell, workdir, cwd, env_keys,
		idempotency_key, sandbox, root, status, created_at, retention, expires_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, 'pending', ?, ?, ?)`,
		id, meta.Op, argv, meta.Command, meta.Shell, meta.Workdir, meta.Cwd, string(envKeys),
		key, sandbox, root, now.UnixNano(), int64(s.retention), now.Add(s.retention).UnixNano()); err != nil {
		return err
	}
	for _, name := range streamNames {
		if _, err := tx.Exec(`INSERT INTO streams (capture_id, name) VALUES (?, ?)`, id, name); err != nil {
			return err
		}
	}
	return tx.Commit()
}

func nonNil(s []string) []string {
	if s == nil {
		return []string{}
	}
	return s
}

func isUniqueViolation(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code() == sqlite3.SQLITE_CONSTRAINT_UNIQUE
}

func unavailable(err error) error {
	e := errcode.New(CodeUnavailable, "the capture store cannot be written, so the command was not started")
	return fmt.Errorf("%w (%w)", e, err)
}

func (c *Capture) openStreams() error {
	if err := private.MkdirAll(c.s.captureDir(c.id)); err != nil {
		return err
	}
	var err error
	if c.stdout, err = c.openStream(Stdout); err != nil {
		return err
	}
	c.stderr, err = c.openStream(Stderr)
	return err
}

func (c *Capture) openStream(name string) (*stream, error) {
	f, err := private.OpenFile(c.s.streamPath(c.id, name), os.O_WRONLY|os.O_CREATE|os.O_EXCL)
	if err != nil {
		return nil, err
	}
	st := &stream{name: name, limit: c.s.maxStream, c: c, f: f}
	st.file = hashingWriter{w: f, h: sha256.New(), n: &st.flushed}
	st.buf = bufio.NewWriterSize(&st.file, bufferSize)
	return st, nil
}

func (c *Capture) closeStreams() {
	for _, st := range []*stream{c.stdout, c.stderr} {
		if st != nil {
			st.f.Close()
		}
	}
}

// ID returns the capture's id.
func (c *Capture) ID() string { return c.id }

// Stdout returns the writer for the command's standard output.
func (c *Capture) Stdout() io.Writer { return c.stdout }

// Stderr returns the writer for the command's standard error.
func (c *Capture) Stderr() io.Writer { return c.stderr }

// Started records that the command's process started.
func (c *Capture) Started(pid int, at time.Time) error {
	res, err := c.s.db.Exec(`UPDATE captures SET status = 'running', pid = ?, started_at = ?
		WHERE id = ? AND status = 'pending'`, pid, at.UnixNano(), c.id)
	if err != nil {
		return err
	}
	if n, _ := res.RowsAffected(); n == 0 {
		// Already marked incomplete by a storage failure: keep that.
		_, err = c.s.db.Exec(`UPDATE captures SET pid = ?, started_at = ? WHERE id = ?`, pid, at.UnixNano(), c.id)
	}
	return err
}

// Discard removes a capture whose command could not be started, so its id
// is unknown afterwards and its idempotency key is free again.
func (c *Capture) Discard() error {
	c.finishMu.Lock()
	defer c.finishMu.Unlock()
	if c.finished {
		return errors.New("capture: Discard after Finish")
	}
	c.finished = true
	c.stdout.close()
	c.stderr.close()
	c.s.mu.Lock()
	delete(c.s.active, c.id)
	c.s.mu.Unlock()
	return c.s.remove(c.id)
}

// Receipt is how a command ended, as passed to Finish.
type Receipt struct {
	Status   Status // exited, killed, timed_out or incomplete
	ExitCode int    // for exited
	Signal   string // for killed and timed_out, if known
	EndedAt  time.Time
	Reason   string // for incomplete
}

// Finish flushes and closes the stream files and records the receipt. The
// command's output must all have been written first. If storing the output
// failed at any point, the capture is recorded as incomplete whatever r
// says, without exit code or signal: the output is not the whole story,
// so the receipt must not present the run as a normal ending.
func (c *Capture) Finish(r Receipt) (*Info, error) {
	switch r.Status {
	case StatusExited, StatusKilled, StatusTimedOut, StatusIncomplete:
	default:
		return nil, errcode.New(errcode.InvalidArgument, "capture: cannot finish with status %q", r.Status)
	}
	c.finishMu.Lock()
	defer c.finishMu.Unlock()
	if c.finished {
		return nil, errors.New("capture: Finish called twice")
	}
	c.finished = true
	defer func() {
		c.s.mu.Lock()
		delete(c.s.active, c.id)
		c.s.mu.Unlock()
	}()
	c.stdout.close()
	c.stderr.close()
	if r.EndedAt.IsZero() {
		r.EndedAt = c.s.now()
	}

	var exitCode, signal, reason any
	switch failure := c.failed(); {
	case failure != "":
		// r.EndedAt is the process's end, which this receipt must not
		// claim; record when observation stopped instead.
		r.Status, reason, r.EndedAt = StatusIncomplete, failure, c.s.now()
	case r.Status == StatusIncomplete:
		reason = r.Reason
	case r.Status == StatusExited:
		exitCode = r.ExitCode
	case r.Signal != "":
		signal = r.Signal
	}

	tx, err := c.s.db.Begin()
	if err != nil {
		return nil, err
	}
	defer tx.Rollback()
	if _, err := tx.Exec(`UPDATE captures SET status = ?, reason = ?, exit_code = ?, signal = ?, ended_at = ? WHERE id = ?`,
		string(r.Status), reason, exitCode, signal, r.EndedAt.UnixNano(), c.id); err != nil {
		return nil, err
	}
	for _, st := range []*stream{c.stdout, c.stderr} {
		si := st.info(false)
		var sum any
		if si.SHA256 != "" {
			sum = si.SHA256
		}
		if _, err := tx.Exec(`UPDATE streams SET stored_bytes = ?, total_bytes = ?, sha256 = ?, truncated = ?, failed = ?, complete = 1
			WHERE capture_id = ? AND name = ?`,
			si.StoredBytes, si.TotalBytes, sum, si.Truncated, si.Failed, c.id, st.name); err != nil {
			return nil, err
		}
	}
	if err := tx.Commit(); err != nil {
		return nil, err
	}
	return c.s.load(c.id)
}

// fail records a storage failure of stream name: the capture becomes
// incomplete now, so command_status stops presenting it as healthy while
// the command still runs.
func (c *Capture) fail(name string, stored int64) {
	c.failMu.Lock()
	first := c.failReason == ""
	if first {
		c.failReason = fmt.Sprintf("writing %s to the capture store failed after %d bytes; later output was not stored", name, stored)
	}
	reason := c.failReason
	c.failMu.Unlock()
	if first {
		// Best effort: Finish records it again, and if the database is the
		// problem, Open's recovery marks the capture incomplete anyway.
		c.s.db.Exec(`UPDATE captures SET status = 'incomplete', reason = ? WHERE id = ?`, reason, c.id)
	}
}

func (c *Capture) failed() string {
	c.failMu.Lock()
	defer c.failMu.Unlock()
	return c.failReason
}

// stream is one output stream's writer. Its mutex is held across the file
// write, so a slow disk blocks the command's writer: that is the
// backpressure.
type stream struct {
	name  string
	limit int64
	c     *Capture
	f     *os.File

	mu        sync.Mutex
	buf       *bufio.Writer
	file      hashingWriter // under buf; hashes and counts what reached f
	flushed   atomic.Int64  // bytes written to f, counted by file; readers load it
	accepted  int64         // bytes handed to buf, at most limit
	total     int64         // bytes the command wrote
	truncated bool
	err       error // first write error; nothing is stored after it
	closed    bool
}

// Write stores what fits under the cap and counts the rest. It never
// reports a storage failure to the command (see the package doc); it only
// fails after Finish.
func (st *stream) Write(p []byte) (int, error) {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return 0, os.ErrClosed
	}
	st.total += int64(len(p))
	if st.err != nil {
		return len(p), nil
	}
	keep := p
	if room := st.limit - st.accepted; int64(len(keep)) > room {
		keep, st.truncated = keep[:room], true
	}
	st.accepted += int64(len(keep))
	if _, err := st.buf.Write(keep); err != nil {
		st.setErr(err)
	}
	return len(p), nil
}

func (st *stream) setErr(err error) {
	st.err = err
	st.c.fail(st.name, st.flushed.Load())
}

// flush writes buffered bytes to the file, so readers see them. The caller
// holds st.mu.
func (st *stream) flush() {
	if st.err == nil && !st.closed {
		if err := st.buf.Flush(); err != nil {
			st.setErr(err)
		}
	}
}

func (st *stream) close() {
	st.mu.Lock()
	defer st.mu.Unlock()
	if st.closed {
		return
	}
	st.flush()
	if err := st.f.Close(); err != nil && st.err == nil {
		st.setErr(err)
	}
	st.closed = true
}

// info returns the stream's counts; with flush, buffered bytes are written
// out first so that StoredBytes is everything a reader can get now.
func (st *stream) info(flush bool) StreamInfo {
	st.mu.Lock()
	defer st.mu.Unlock()
	if flush {
		st.flush()
	}
	si := StreamInfo{
		StoredBytes: st.flushed.Load(),
		TotalBytes:  st.total,
		Truncated:   st.truncated,
		Failed:      st.err != nil,
		Complete:    st.closed,
	}
	if st.closed {
		si.SHA256 = hex.EncodeToString(st.file.h.Sum(nil))
	}
	return si
}

// hashingWriter writes to w and hashes and counts exactly the bytes w
// accepted, so the hash always matches the file even after an error.
type hashingWriter struct {
	w io.Writer
	h hash.Hash
	n *atomic.Int64
}

func (hw *hashingWriter) Write(p []byte) (int, error) {
	n, err := hw.w.Write(p)
	hw.h.Write(p[:n])
	hw.n.Add(int64(n))
	return n, err
}

// remove deletes a capture's row and files. Rows go first: a directory
// without a row is an orphan that Cleanup removes, while a row without
// files would be a capture that cannot be read.
func (s *Store) remove(id string) error {
	if _, err := s.db.Exec(`DELETE FROM captures WHERE id = ?`, id); err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	return os.RemoveAll(s.captureDir(id))
}
