// Package capture is hostlink's private store of command output and process
// receipts.
//
// Each capture is a directory under the store's private directory holding
// two files, stdout and stderr, plus a row in captures.db (SQLite in WAL
// mode) with what was run, the process receipt and, per stream, the bytes
// stored, the bytes the command wrote, a SHA-256 and a truncated flag.
//
// Output goes straight to the files through a fixed 64 KiB buffer per
// stream: a Write blocks while the disk is slow, so a fast command waits
// rather than hostlink's memory growing. Past Options.MaxStreamBytes the
// output is still drained and counted but no longer stored, and the stream
// is marked truncated; its SHA-256 covers the stored bytes, which are what
// a reader can fetch and check. If a stream file cannot be written, the
// capture is marked incomplete at once, further output is drained and
// discarded (the command sees no error, so a storage failure does not turn
// into a different outcome such as SIGPIPE), and the receipt never claims
// the process ended: its exit code and signal are not recorded.
//
// Captures expire Options.Retention after creation, fixed when they are
// created; reads never extend it. Cleanup runs at Open and then
// periodically (RunCleanup) and never removes a capture that is still
// active or being read.
//
// Ids are opaque ("cap_" and 26 base32 characters, 128 random bits) and are
// checked before they touch the file system.
package capture

import (
	"crypto/rand"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/private"
	"github.com/hostlink/hostlink/internal/sqlitedb"

	_ "modernc.org/sqlite" // registers the pure-Go "sqlite" driver
)

// Codes this package adds to internal/errcode's.
const (
	// CodeNotFound: no capture has that id (it never existed, was
	// discarded or has expired).
	CodeNotFound errcode.Code = "CAPTURE_NOT_FOUND"
	// CodeUnavailable: the capture store cannot be written. From Create it
	// means the command must not be started.
	CodeUnavailable errcode.Code = "CAPTURE_UNAVAILABLE"
)

// Defaults for zero Options fields.
const (
	DefaultRetention      = 7 * 24 * time.Hour
	DefaultMaxStreamBytes = 256 << 20
)

// dbName is the SQLite database inside Options.Dir (see package sqlitedb
// for its pragmas).
const dbName = "captures.db"

// Options configures a Store.
type Options struct {
	// Dir is the store's private directory: captures.db and one
	// subdirectory per capture. It is created (0700, or a private DACL on
	// Windows) if missing.
	Dir string
	// Retention is how long a capture is kept after creation (default 7
	// days). Each capture records the value in force when it was created.
	Retention time.Duration
	// MaxStreamBytes is the most bytes stored per stream (default 256 MiB).
	MaxStreamBytes int64
	// Now is the clock (default time.Now); tests replace it.
	Now func() time.Time
}

// Store is an open capture store. Its methods are safe for concurrent use.
type Store struct {
	dir       string
	db        *sql.DB
	retention time.Duration
	maxStream int64
	now       func() time.Time

	mu       sync.Mutex
	active   map[string]*Capture // created and not yet finished
	readers  map[string]int      // reads in progress per capture id
	removing map[string]bool     // picked by Cleanup; reads must not start
	closed   bool
}

// Open opens (creating if needed) the store in o.Dir, applies schema
// migrations, marks captures that a previous hostlink left pending or
// running as incomplete (their processes are no longer ours to observe),
// and removes expired captures.
func Open(o Options) (*Store, error) {
	if o.Dir == "" {
		return nil, errors.New("capture: no directory")
	}
	if o.Retention <= 0 {
		o.Retention = DefaultRetention
	}
	if o.MaxStreamBytes <= 0 {
		o.MaxStreamBytes = DefaultMaxStreamBytes
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	if err := private.MkdirAll(o.Dir); err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	db, err := sqlitedb.Open(filepath.Join(o.Dir, dbName), sqlitedb.Options{ForeignKeys: true, Migrations: migrations})
	if err != nil {
		return nil, fmt.Errorf("capture: %w", err)
	}
	s := &Store{
		dir:       o.Dir,
		db:        db,
		retention: o.Retention,
		maxStream: o.MaxStreamBytes,
		now:       o.Now,
		active:    make(map[string]*Capture),
		readers:   make(map[string]int),
		removing:  make(map[string]bool),
	}
	if err := s.recover(); err != nil {
		db.Close()
		return nil, fmt.Errorf("capture: recovering interrupted captures: %w", err)
	}
	if _, err := s.Cleanup(); err != nil {
		db.Close()
		return nil, fmt.Errorf("capture: cleanup: %w", err)
	}
	return s, nil
}

// recover marks captures left pending or running by a previous process as
// incomplete, recording what their files hold. Their stream hashes stay
// unknown: the hashing state died with that process.
func (s *Store) recover() error {
	rows, err := s.db.Query(`SELECT id FROM captures WHERE status IN ('pending', 'running')`)
	if err != nil {
		return err
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	for _, id := range ids {
		tx, err := s.db.Begin()
		if err != nil {
			return err
		}
		for _, name := range streamNames {
			var size int64
			if fi, err := os.Stat(s.streamPath(id, name)); err == nil {
				size = fi.Size()
			}
			if _, err := tx.Exec(`UPDATE streams SET stored_bytes = ?, total_bytes = max(total_bytes, ?), complete = 1
				WHERE capture_id = ? AND name = ?`, size, size, id, name); err != nil {
				tx.Rollback()
				return err
			}
		}
		if _, err := tx.Exec(`UPDATE captures SET status = 'incomplete', reason = ? WHERE id = ?`,
			"hostlink stopped while the command was running; output after that was not captured", id); err != nil {
			tx.Rollback()
			return err
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	return nil
}

// Close marks captures that are still active as incomplete, closes their
// files and closes the database. Commands should be ended and their
// captures finished before Close.
func (s *Store) Close() error {
	s.mu.Lock()
	s.closed = true
	active := make([]*Capture, 0, len(s.active))
	for _, c := range s.active {
		active = append(active, c)
	}
	s.mu.Unlock()
	var errs []error
	for _, c := range active {
		if _, err := c.Finish(Receipt{Status: StatusIncomplete, Reason: "hostlink stopped before the command ended"}); err != nil {
			errs = append(errs, err)
		}
	}
	errs = append(errs, s.db.Close())
	return errors.Join(errs...)
}

// Status is a capture's state. Pending and running captures are active;
// the others are final.
type Status string

const (
	// StatusPending: created, command not started yet.
	StatusPending Status = "pending"
	// StatusRunning: the command was started and has not been finished.
	StatusRunning Status = "running"
	// StatusExited: the process exited by itself; ExitCode is set.
	StatusExited Status = "exited"
	// StatusKilled: the process was ended by a signal or kill_command.
	StatusKilled Status = "killed"
	// StatusTimedOut: hostlink ended the process at its timeout.
	StatusTimedOut Status = "timed_out"
	// StatusIncomplete: the output is not the whole story (a storage
	// failure, or hostlink stopped while the command ran); the process's
	// outcome is not recorded.
	StatusIncomplete Status = "incomplete"
)

// Meta is what a capture records about the request that created it.
type Meta struct {
	Op             string   `json:"op"`                // "run_command" or "start_command"
	Argv           []string `json:"argv,omitempty"`    // a command run without a shell, or
	Command        string   `json:"command,omitempty"` // a command line for Shell
	Shell          string   `json:"shell,omitempty"`
	Workdir        string   `json:"workdir,omitempty"` // workdir alias
	Cwd            string   `json:"cwd,omitempty"`     // relative to the workdir's root
	EnvKeys        []string `json:"env_keys,omitempty"`
	IdempotencyKey string   `json:"idempotency_key,omitempty"`
	Sandbox        string   `json:"sandbox,omitempty"` // the confinement it runs in (sandbox.Status.String)
	// Root is the workdir's directory (absolute); "" for a capture made
	// before it was recorded.
	Root string `json:"root,omitempty"`
}

// Info is a capture's receipt and stream summaries.
type Info struct {
	ID        string
	Meta      Meta
	Status    Status
	Reason    string // why the capture is incomplete
	Pid       int
	ExitCode  *int   // set for StatusExited
	Signal    string // e.g. "SIGKILL", for killed or timed-out commands
	CreatedAt time.Time
	StartedAt time.Time // zero until Started
	EndedAt   time.Time // when the process ended, or for incomplete captures when observation stopped
	ExpiresAt time.Time
	Stdout    StreamInfo
	Stderr    StreamInfo
}

// StreamInfo summarizes one stream.
type StreamInfo struct {
	StoredBytes int64  // bytes kept and readable
	TotalBytes  int64  // bytes the command wrote, stored or not
	SHA256      string // hex SHA-256 of the stored bytes, once Complete (empty after a crash)
	Truncated   bool   // output past the cap was counted but not stored
	Failed      bool   // writing the file failed; later output was not stored
	Complete    bool   // no more bytes will be stored
}

// Get returns the capture's receipt and stream summaries. For an active
// capture the byte counts are the current ones (buffered output is written
// out first, so StoredBytes is what a Read can get).
func (s *Store) Get(id string) (*Info, error) {
	if !validID(id) {
		return nil, notFound(id)
	}
	info, err := s.load(id)
	if err != nil {
		return nil, err
	}
	if c := s.activeCapture(id); c != nil {
		info.Stdout = c.stdout.info(true)
		info.Stderr = c.stderr.info(true)
	}
	return info, nil
}

// Filter selects captures for List.
type Filter struct {
	Status Status // only captures in this state; "" for all
	Limit  int    // most captures returned, newest first; 0 means 100
	// Roots, if not nil, keeps only captures of commands run in these
	// workdir directories (Meta.Root), and of those made before roots
	// were recorded, the ones whose workdir alias is in Aliases.
	Roots, Aliases []string
}

// Keeps reports whether f's Roots and Aliases keep info.
func (f Filter) Keeps(info *Info) bool {
	if f.Roots == nil {
		return true
	}
	if info.Meta.Root == "" {
		return slices.Contains(f.Aliases, info.Meta.Workdir)
	}
	return slices.Contains(f.Roots, info.Meta.Root)
}

// List returns captures, newest first.
func (s *Store) List(f Filter) ([]Info, error) {
	if f.Limit <= 0 {
		f.Limit = 100
	}
	q, args := `SELECT id FROM captures WHERE (? = '' OR status = ?)`, []any{string(f.Status), string(f.Status)}
	if f.Roots != nil {
		q += ` AND (root IN (SELECT value FROM json_each(?)) OR (root IS NULL AND workdir IN (SELECT value FROM json_each(?))))`
		roots, _ := json.Marshal(f.Roots)
		aliases, _ := json.Marshal(nonNil(f.Aliases))
		args = append(args, string(roots), string(aliases))
	}
	rows, err := s.db.Query(q+` ORDER BY created_at DESC, id LIMIT ?`, append(args, f.Limit)...)
	if err != nil {
		return nil, err
	}
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			rows.Close()
			return nil, err
		}
		ids = append(ids, id)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	infos := make([]Info, 0, len(ids))
	for _, id := range ids {
		info, err := s.Get(id)
		if errcode.CodeOf(err) == CodeNotFound {
			continue // removed since the query
		}
		if err != nil {
			return nil, err
		}
		infos = append(infos, *info)
	}
	return infos, nil
}

// FindByIdempotencyKey returns the capture created with key, if any.
func (s *Store) FindByIdempotencyKey(key string) (*Info, bool, error) {
	var id string
	err := s.db.QueryRow(`SELECT id FROM captures WHERE idempotency_key = ?`, key).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	info, err := s.Get(id)
	if errcode.CodeOf(err) == CodeNotFound {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, err
	}
	return info, true, nil
}

// load reads a capture's row and stream rows.
func (s *Store) load(id string) (*Info, error) {
	var (
		info                          Info
		argv, command, shell, workdir sql.NullString
		cwd, key, reason, signal      sql.NullString
		sandbox, root                 sql.NullString
		envKeys                       string
		pid, exitCode, started, ended sql.NullInt64
		created, expires              int64
	)
	err := s.db.QueryRow(`SELECT op, argv, command, shell, workdir, cwd, env_keys, idempotency_key, sandbox, root,
		status, reason, pid, exit_code, signal, created_at, started_at, ended_at, expires_at
		FROM captures WHERE id = ?`, id).Scan(&info.Meta.Op, &argv, &command, &shell, &workdir, &cwd, &envKeys, &key, &sandbox, &root,
		&info.Status, &reason, &pid, &exitCode, &signal, &created, &started, &ended, &expires)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, notFound(id)
	}
	if err != nil {
		return nil, err
	}
	info.ID = id
	if argv.Valid {
		if err := json.Unmarshal([]byte(argv.String), &info.Meta.Argv); err != nil {
			return nil, err
		}
	}
	if err := json.Unmarshal([]byte(envKeys), &info.Meta.EnvKeys); err != nil {
		return nil, err
	}
	info.Meta.Command, info.Meta.Shell = command.String, shell.String
	info.Meta.Workdir, info.Meta.Cwd, info.Meta.IdempotencyKey = workdir.String, cwd.String, key.String
	info.Meta.Sandbox, info.Meta.Root = sandbox.String, root.String
	info.Reason, info.Signal, info.Pid = reason.String, signal.String, int(pid.Int64)
	if exitCode.Valid {
		code := int(exitCode.Int64)
		info.ExitCode = &code
	}
	info.CreatedAt, info.ExpiresAt = time.Unix(0, created), time.Unix(0, expires)
	if started.Valid {
		info.StartedAt = time.Unix(0, started.Int64)
	}
	if ended.Valid {
		info.EndedAt = time.Unix(0, ended.Int64)
	}

	rows, err := s.db.Query(`SELECT name, stored_bytes, total_bytes, sha256, truncated, failed, complete
		FROM streams WHERE capture_id = ?`, id)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var (
			name string
			si   StreamInfo
			sum  sql.NullString
		)
		if err := rows.Scan(&name, &si.StoredBytes, &si.TotalBytes, &sum, &si.Truncated, &si.Failed, &si.Complete); err != nil {
			return nil, err
		}
		si.SHA256 = sum.String
		switch name {
		case Stdout:
			info.Stdout = si
		case Stderr:
			info.Stderr = si
		}
	}
	return &info, rows.Err()
}

func (s *Store) activeCapture(id string) *Capture {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.active[id]
}

// Stream names.
const (
	Stdout = "stdout"
	Stderr = "stderr"
)

var streamNames = []string{Stdout, Stderr}

func (s *Store) captureDir(id string) string { return filepath.Join(s.dir, id) }

func (s *Store) streamPath(id, stream string) string {
	return filepath.Join(s.dir, id, stream)
}

const idPrefix = "cap_"

// newID returns a fresh capture id: 128 random bits in lowercase base32.
func newID() string { return idPrefix + strings.ToLower(rand.Text()) }

// validID reports whether id has newID's shape. Ids name directories, so
// nothing else may reach the file system.
func validID(id string) bool {
	rest, ok := strings.CutPrefix(id, idPrefix)
	if !ok || len(rest) != 26 {
		return false
	}
	for _, r := range rest {
		if !('a' <= r && r <= 'z' || '2' <= r && r <= '7') {
			return false
		}
	}
	return true
}

func notFound(id string) error {
	if !validID(id) {
		return errcode.New(CodeNotFound, "no capture with that id")
	}
	return errcode.New(CodeNotFound, "no capture %s (it may have expired)", id)
}
