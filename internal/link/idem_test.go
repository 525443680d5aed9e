package link

import (
	"context"
	"encoding/json"
	"errors"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/link/wire"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
)

func req(typ, payload string) *wire.Envelope {
	return &wire.Envelope{Type: typ, ID: wire.NewID(), Payload: json.RawMessage(payload)}
}

func TestIdemStoreOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state", "link.db")
	s, err := OpenIdemStore(path)
	if err != nil {
		t.Fatal(err)
	}
	var runs atomic.Int32
	fn := func() (string, any, error) {
		runs.Add(1)
		return wire.TypeAck, wire.AckPayload{OK: true}, nil
	}
	ctx := context.Background()
	e := req(wire.TypeFileWrite, `{"path":"a","content":"x","idempotency_key":"k1"}`)
	typ, resp, _, err := s.Do(ctx, "sess", "k1", e, fn)
	if err != nil || typ != wire.TypeAck || string(resp.(json.RawMessage)) != `{"ok":true}` {
		t.Fatalf("first: %s %v %v", typ, resp, err)
	}
	// Same request, field order changed and a new envelope id: recorded.
	again := req(wire.TypeFileWrite, `{"content":"x","idempotency_key":"k1","path":"a"}`)
	if typ, _, replayed, err := s.Do(ctx, "sess", "k1", again, fn); err != nil || typ != wire.TypeAck || !replayed || runs.Load() != 1 {
		t.Fatalf("repeat: %s %v replayed %v, %d runs", typ, err, replayed, runs.Load())
	}
	// Another session's key space is separate.
	if _, _, _, err := s.Do(ctx, "other", "k1", e, fn); err != nil || runs.Load() != 2 {
		t.Fatalf("other scope: %v, %d runs", err, runs.Load())
	}
	// Same key, different request.
	_, _, _, err = s.Do(ctx, "sess", "k1", req(wire.TypeFileWrite, `{"path":"a","content":"y"}`), fn)
	if errcode.CodeOf(err) != wire.CodeIdempotencyKeyReused {
		t.Fatalf("reused key: %v", err)
	}
	// An error is a first result too, except an audit refusal (nothing ran).
	boom := func() (string, any, error) { runs.Add(1); return "", nil, errcode.New(errcode.PathNotFound, "gone") }
	typ, resp, _, _ = s.Do(ctx, "sess", "k2", e, boom)
	typ2, resp2, _, _ := s.Do(ctx, "sess", "k2", e, boom)
	if typ != wire.TypeError || typ2 != wire.TypeError || string(resp.(json.RawMessage)) != string(resp2.(json.RawMessage)) || runs.Load() != 3 {
		t.Fatalf("recorded error: %s %s / %s %s, %d runs", typ, resp, typ2, resp2, runs.Load())
	}
	refused := func() (string, any, error) {
		runs.Add(1)
		return "", nil, registryRefusal(t, errcode.AuditUnavailable)
	}
	s.Do(ctx, "sess", "k3", e, refused)
	s.Do(ctx, "sess", "k3", e, refused)
	if runs.Load() != 5 {
		t.Fatalf("an audit refusal was recorded: %d runs", runs.Load())
	}
	busy := func() (string, any, error) { return "", nil, registryRefusal(t, errcode.Overloaded) }
	s.Do(ctx, "sess", "k5", e, busy)
	if typ, _, _, err := s.Do(ctx, "sess", "k5", e, fn); err != nil || typ != wire.TypeAck || runs.Load() != 6 {
		t.Fatalf("a rate-limited request was recorded: %s %v, %d runs", typ, err, runs.Load())
	}

	// Survives a restart; a request left running is never run again.
	if _, err := s.db.Exec(`INSERT INTO requests(scope,key,hash,state,created_at) VALUES('sess','k4',?, 'running', ?)`,
		mustHash(t, e), time.Now().Unix()); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err = OpenIdemStore(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if typ, _, _, err := s.Do(ctx, "sess", "k1", e, fn); err != nil || typ != wire.TypeAck || runs.Load() != 6 {
		t.Fatalf("after reopen: %s %v, %d runs", typ, err, runs.Load())
	}
	if _, _, _, err := s.Do(ctx, "sess", "k4", e, fn); errcode.CodeOf(err) != wire.CodeOutcomeUnknown || runs.Load() != 6 {
		t.Fatalf("interrupted request: %v, %d runs", err, runs.Load())
	}
}

func mustHash(t *testing.T, e *wire.Envelope) string {
	h, err := requestHash(e)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

// A repeat that arrives while the first is still running waits for its
// result instead of running again.
func TestIdemStoreConcurrentRepeat(t *testing.T) {
	s, err := OpenIdemStore(filepath.Join(t.TempDir(), "link.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	release := make(chan struct{})
	var runs atomic.Int32
	fn := func() (string, any, error) {
		runs.Add(1)
		<-release
		return wire.TypeCommandResult, wire.CommandResult{Stdout: "once"}, nil
	}
	e := req(wire.TypeExecuteCommand, `{"argv":["x"],"idempotency_key":"k"}`)
	var wg sync.WaitGroup
	results := make([]string, 4)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, resp, _, err := s.Do(context.Background(), "s", "k", e, fn)
			if err == nil {
				results[i] = string(resp.(json.RawMessage))
			}
		}()
	}
	for runs.Load() == 0 {
		time.Sleep(time.Millisecond)
	}
	close(release)
	wg.Wait()
	for _, r := range results {
		if r != results[0] || r == "" {
			t.Fatalf("results differ: %q", results)
		}
	}
	if runs.Load() != 1 {
		t.Fatalf("%d runs", runs.Load())
	}
	if _, _, _, err := s.Do(context.Background(), "s", string(make([]byte, 200)), e, fn); errcode.CodeOf(err) != errcode.InvalidArgument {
		t.Fatalf("long key: %v", err)
	}
}

// registryRefusal is a refusal the registry makes before a call runs, for
// a reason that may pass: the audit log unavailable, or a budget spent.
func registryRefusal(t *testing.T, code errcode.Code) error {
	t.Helper()
	b := &ops.Budget{Name: "x", PerMinute: 1, Transports: ops.Remote}
	a := &checkingAudit{}
	r := ops.New(ops.Options{Audit: a})
	ops.Register(r, ops.Spec{Name: "x", Description: "x", Class: policy.FilesWrite, Transports: ops.AllTransports, Budget: b},
		func(context.Context, *ops.Call, struct{}) (struct{}, error) { return struct{}{}, nil })
	caller := ops.Caller{Transport: audit.Link}
	if code == errcode.AuditUnavailable {
		a.down = true
	} else {
		r.Call(context.Background(), caller, "x", nil, nil)
	}
	_, err := r.Call(context.Background(), caller, "x", nil, nil)
	if errcode.CodeOf(err) != code || !ops.Retryable(err) {
		t.Fatalf("registry refusal: %v", err)
	}
	return err
}

type checkingAudit struct{ down bool }

func (a *checkingAudit) Check() error {
	if a.down {
		return errors.New("down")
	}
	return nil
}
func (a *checkingAudit) Append(audit.Record) error { return nil }
