package mesh

import (
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/private"
	"github.com/hostlink/hostlink/internal/sqlitedb"
)

//go:embed sql/*.sql
var idemMigrations embed.FS

// idemRetention is how long an outcome is kept for a resend.
const idemRetention = 7 * 24 * time.Hour

// IdemStore records the outcome of mesh mutations that carry an
// idempotency key, as the platform link's store does for its requests: a
// row is written "running" before the call runs and its outcome before
// the reply is sent. A resend (the reply was lost on the bus, the gateway
// restarted) gets the recorded outcome; a row a stopped hostlink left
// running becomes "unknown", and its resend IDEMPOTENCY_OUTCOME_UNKNOWN:
// a mutation never runs twice.
type IdemStore struct {
	db      *sql.DB
	mu      sync.Mutex
	running map[string]chan struct{}
}

// OpenIdemStore opens (creating) the store at path.
func OpenIdemStore(path string) (*IdemStore, error) {
	if err := private.MkdirAll(filepath.Dir(path)); err != nil {
		return nil, err
	}
	db, err := sqlitedb.Open(path, sqlitedb.Options{FullSync: true, Migrations: idemMigrations})
	if err != nil {
		return nil, fmt.Errorf("mesh idempotency store: %w", err)
	}
	if _, err := db.Exec(`UPDATE outcomes SET state='unknown' WHERE state='running'`); err != nil {
		db.Close()
		return nil, err
	}
	if _, err := db.Exec(`DELETE FROM outcomes WHERE created_at < ?`, time.Now().Add(-idemRetention).Unix()); err != nil {
		db.Close()
		return nil, err
	}
	return &IdemStore{db: db, running: map[string]chan struct{}{}}, nil
}

// Close closes the database.
func (s *IdemStore) Close() error { return s.db.Close() }

// Do runs fn once per caller and key. A resend of the same operation and
// request body gets the recorded result or error (replayed); one while
// the first runs waits for it; another request under the key is refused.
// A refusal that may pass (retryable: an approval still pending, a
// budget) records nothing, so that a resend can run.
func (s *IdemStore) Do(caller, key, op, hash string, fn func() ([]byte, error)) (result []byte, replayed bool, err error) {
	mk := caller + "\x00" + key
	for {
		s.mu.Lock()
		wait, busy := s.running[mk]
		if busy {
			s.mu.Unlock()
			<-wait
			continue
		}
		res, found, err := s.lookup(caller, key, op, hash)
		if err != nil || found {
			s.mu.Unlock()
			return res, err == nil || !isStoreError(err), err
		}
		if _, err := s.db.Exec(`INSERT INTO outcomes(caller,key,op,hash,state,created_at) VALUES(?,?,?,?,'running',?)`,
			caller, key, op, hash, time.Now().Unix()); err != nil {
			s.mu.Unlock()
			return nil, false, errcode.New(errcode.Internal, "the idempotency store cannot be written; request not run")
		}
		done := make(chan struct{})
		s.running[mk] = done
		s.mu.Unlock()
		res, err = s.runAndRecord(caller, key, mk, done, fn)
		return res, false, err
	}
}

// errStore marks the store's own failures, which are not outcomes.
type errStore struct{ error }

func (e errStore) Unwrap() error { return e.error }

func isStoreError(err error) bool {
	var e errStore
	return errors.As(err, &e)
}

func (s *IdemStore) lookup(caller, key, op, hash string) ([]byte, bool, error) {
	var (
		o, h, state string
		reply       []byte
		failed      bool
	)
	err := s.db.QueryRow(`SELECT op,hash,state,reply,failed FROM outcomes WHERE caller=? AND key=?`, caller, key).Scan(&o, &h, &state, &reply, &failed)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, false, nil
	}
	if err != nil {
		return nil, true, errStore{errcode.New(errcode.Internal, "the idempotency store cannot be read; request not run")}
	}
	if o != op || h != hash {
		return nil, true, errStore{errcode.New(CodeIdempotencyConflict, "this idempotency key was already used for a different request")}
	}
	if state != "done" {
		return nil, true, errcode.New(CodeIdempotencyUnknown, "a request with this idempotency key was started before hostlink stopped; its outcome is unknown and it is not run again")
	}
	if failed {
		var e errcode.Error
		if json.Unmarshal(reply, &e) != nil {
			return nil, true, errStore{errcode.New(errcode.Internal, "the recorded outcome cannot be read")}
		}
		return nil, true, &e
	}
	return reply, true, nil
}

func (s *IdemStore) runAndRecord(caller, key, mk string, done chan struct{}, fn func() ([]byte, error)) ([]byte, error) {
	defer func() {
		s.mu.Lock()
		delete(s.running, mk)
		s.mu.Unlock()
		close(done)
	}()
	res, err := fn()
	reply, failed := res, false
	if err != nil {
		if ops.Retryable(err) {
			s.db.Exec(`DELETE FROM outcomes WHERE caller=? AND key=?`, caller, key)
			return nil, err
		}
		reply, _ = json.Marshal(errcode.As(err))
		failed = true
	}
	if _, werr := s.db.Exec(`UPDATE outcomes SET state='done', reply=?, failed=? WHERE caller=? AND key=?`, reply, failed, caller, key); werr != nil {
		return nil, errcode.New(errcode.Internal, "the outcome could not be recorded")
	}
	return res, err
}
