package link

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/link/wire"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/private"
	"github.com/hostlink/hostlink/internal/sqlitedb"
)

// idemRetention is how long a recorded response is kept.
const idemRetention = 7 * 24 * time.Hour

// maxKeyLen bounds an idempotency key.
const maxKeyLen = 128

// idemMigrations is the idempotency store's schema.
//
//go:embed sql/*.sql
var idemMigrations embed.FS

// IdemStore records the responses of requests that carry an idempotency
// key, so a re-sent request (after a reconnect or a restart) gets the first
// response and is never run twice. It lives in a private SQLite file.
type IdemStore struct {
	db *sql.DB

	mu      sync.Mutex
	running map[string]chan struct{} // scope\x00key → closed when recorded
}

// OpenIdemStore opens (creating) the store at path. Requests a previous
// hostlink started but did not finish are marked unknown: they are never
// run again, and a re-send is told their outcome is unknown.
func OpenIdemStore(path string) (*IdemStore, error) {
	if err := private.MkdirAll(filepath.Dir(path)); err != nil {
		return nil, err
	}
	// Every commit is synced: a recorded response must outlive a power loss
	// as surely as the side effect it stands for.
	db, err := sqlitedb.Open(path, sqlitedb.Options{FullSync: true, Migrations: idemMigrations})
	if err != nil {
		return nil, fmt.Errorf("idempotency store: %w", err)
	}
	if _, err := db.Exec(`UPDATE requests SET state='unknown' WHERE state='running'`); err != nil {
		db.Close()
		return nil, err
	}
	s := &IdemStore{db: db, running: map[string]chan struct{}{}}
	if err := s.Prune(); err != nil {
		db.Close()
		return nil, err
	}
	return s, nil
}

// Prune removes finished records older than the retention.
func (s *IdemStore) Prune() error {
	_, err := s.db.Exec(`DELETE FROM requests WHERE state != 'running' AND created_at < ?`, time.Now().Add(-idemRetention).Unix())
	return err
}

// Close closes the database.
func (s *IdemStore) Close() error { return s.db.Close() }

// requestHash identifies a request's content apart from its key and
// envelope id, independent of field order.
func requestHash(e *wire.Envelope) (string, error) {
	var m map[string]any
	if err := json.Unmarshal(e.Payload, &m); err != nil {
		return "", errcode.New(wire.CodeInvalidMessage, "payload is not an object")
	}
	delete(m, "idempotency_key")
	b, err := json.Marshal(m) // map keys marshal sorted
	if err != nil {
		return "", err
	}
	h := sha256.New()
	h.Write([]byte(e.Type))
	h.Write([]byte{0})
	h.Write(b)
	return hex.EncodeToString(h.Sum(nil)), nil
}

// Do runs fn once per (scope, key). A repeat with the same request returns
// the recorded response (replayed); a repeat while the first is still
// running waits for it; a repeat with a different request is refused.
func (s *IdemStore) Do(ctx context.Context, scope, key string, e *wire.Envelope, fn func() (string, any, error)) (typ string, resp any, replayed bool, err error) {
	if len(key) > maxKeyLen {
		return "", nil, false, errcode.New(errcode.InvalidArgument, "idempotency_key is longer than %d bytes", maxKeyLen)
	}
	hash, err := requestHash(e)
	if err != nil {
		return "", nil, false, err
	}
	mk := scope + "\x00" + key
	for {
		s.mu.Lock()
		wait, busy := s.running[mk]
		if !busy {
			typ, resp, found, err := s.lookup(scope, key, hash)
			if err != nil || found {
				s.mu.Unlock()
				return typ, resp, err == nil, err
			}
			if _, err := s.db.Exec(`INSERT INTO requests(scope,key,hash,state,created_at) VALUES(?,?,?,'running',?)`,
				scope, key, hash, time.Now().Unix()); err != nil {
				s.mu.Unlock()
				return "", nil, false, errcode.New(errcode.Internal, "the idempotency store cannot be written; request not run")
			}
			done := make(chan struct{})
			s.running[mk] = done
			s.mu.Unlock()
			typ, resp, err = s.runAndRecord(scope, key, mk, done, fn)
			return typ, resp, false, err
		}
		s.mu.Unlock()
		select {
		case <-wait:
		case <-ctx.Done():
			return "", nil, false, ctx.Err()
		}
	}
}

// lookup returns a recorded response for (scope, key), if any.
func (s *IdemStore) lookup(scope, key, hash string) (typ string, resp any, found bool, err error) {
	var (
		h, state string
		rt       sql.NullString
		raw      []byte
	)
	err = s.db.QueryRow(`SELECT hash,state,resp_type,resp FROM requests WHERE scope=? AND key=?`, scope, key).Scan(&h, &state, &rt, &raw)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil, false, nil
	}
	if err != nil {
		return "", nil, true, errcode.New(errcode.Internal, "the idempotency store cannot be read; request not run")
	}
	if h != hash {
		return "", nil, true, errcode.New(wire.CodeIdempotencyKeyReused, "idempotency_key was already used for a different request")
	}
	if state != "done" {
		return "", nil, true, errcode.New(wire.CodeOutcomeUnknown,
			"a request with this idempotency_key was started before hostlink stopped; its outcome is unknown and it is not run again")
	}
	return rt.String, json.RawMessage(raw), true, nil
}

// runAndRecord runs fn and records its response (an ERROR too: it is the
// first result). A response that cannot be recorded leaves the row
// "running", which a restart turns into "unknown": never a second run.
func (s *IdemStore) runAndRecord(scope, key, mk string, done chan struct{}, fn func() (string, any, error)) (string, any, error) {
	defer func() {
		s.mu.Lock()
		delete(s.running, mk)
		s.mu.Unlock()
		close(done)
	}()
	typ, payload, err := fn()
	if err != nil {
		if ops.Retryable(err) {
			// Refused before it ran, for a reason that may pass (the
			// audit log, a budget, the user's approval): a re-send may
			// run it.
			s.db.Exec(`DELETE FROM requests WHERE scope=? AND key=?`, scope, key)
			return "", nil, err
		}
		e := errcode.As(err)
		typ, payload = wire.TypeError, wire.ErrorPayload{Code: string(e.Code), Message: e.Message, Details: e.Details}
	}
	raw, merr := json.Marshal(payload)
	if merr == nil {
		_, merr = s.db.Exec(`UPDATE requests SET state='done', resp_type=?, resp=? WHERE scope=? AND key=?`, typ, []byte(raw), scope, key)
	}
	if merr != nil {
		return "", nil, errcode.New(errcode.Internal, "the response could not be recorded")
	}
	return typ, json.RawMessage(raw), nil
}
