package link

import (
	"context"
	"encoding/json"
	"path/filepath"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/errcode"
)

func req(typ, payload string) *Envelope {
	return &Envelope{Type: typ, ID: NewID(), Payload: json.RawMessage(payload)}
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
		return TypeAck, AckPayload{OK: true}, nil
	}
	ctx := context.Background()
	e := req(TypeFileWrite, `{"path":"a","content":"x","idempotency_key":"k1"}`)
	typ, resp, err := s.Do(ctx, "sess", "k1", e, fn)
	if err != nil || typ != TypeAck || string(resp.(json.RawMessage)) != `{"ok":true}` {
		t.Fatalf("first: %s %v %v", typ, resp, err)
	}
	// Same request, field order changed and a new envelope id: recorded.
	again := req(TypeFileWrite, `{"content":"x","idempotency_key":"k1","path":"a"}`)
	if typ, _, err := s.Do(ctx, "sess", "k1", again, fn); err != nil || typ != TypeAck || runs.Load() != 1 {
		t.Fatalf("repeat: %s %v, %d runs", typ, err, runs.Load())
	}
	// Another session's key space is separate.
	if _, _, err := s.Do(ctx, "other", "k1", e, fn); err != nil || runs.Load() != 2 {
		t.Fatalf("other scope: %v, %d runs", err, runs.Load())
	}
	// Same key, different request.
	_, _, err = s.Do(ctx, "sess", "k1", req(TypeFileWrite, `{"path":"a","content":"y"}`), fn)
	if errcode.CodeOf(err) != CodeIdempotencyKeyReused {
		t.Fatalf("reused key: %v", err)
	}
	// An error is a first result too, except an audit refusal (nothing ran).
	boom := func() (string, any, error) { runs.Add(1); return "", nil, errcode.New(errcode.PathNotFound, "gone") }
	typ, resp, _ = s.Do(ctx, "sess", "k2", e, boom)
	typ2, resp2, _ := s.Do(ctx, "sess", "k2", e, boom)
	if typ != TypeError || typ2 != TypeError || string(resp.(json.RawMessage)) != string(resp2.(json.RawMessage)) || runs.Load() != 3 {
		t.Fatalf("recorded error: %s %s / %s %s, %d runs", typ, resp, typ2, resp2, runs.Load())
	}
	refused := func() (string, any, error) {
		runs.Add(1)
		return "", nil, errcode.New(errcode.AuditUnavailable, "no audit")
	}
	s.Do(ctx, "sess", "k3", e, refused)
	s.Do(ctx, "sess", "k3", e, refused)
	if runs.Load() != 5 {
		t.Fatalf("an audit refusal was recorded: %d runs", runs.Load())
	}
	busy := func() (string, any, error) { return "", nil, errcode.New(errcode.Overloaded, "busy") }
	s.Do(ctx, "sess", "k5", e, busy)
	if typ, _, err := s.Do(ctx, "sess", "k5", e, fn); err != nil || typ != TypeAck || runs.Load() != 6 {
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
	if typ, _, err := s.Do(ctx, "sess", "k1", e, fn); err != nil || typ != TypeAck || runs.Load() != 6 {
		t.Fatalf("after reopen: %s %v, %d runs", typ, err, runs.Load())
	}
	if _, _, err := s.Do(ctx, "sess", "k4", e, fn); errcode.CodeOf(err) != CodeOutcomeUnknown || runs.Load() != 6 {
		t.Fatalf("interrupted request: %v, %d runs", err, runs.Load())
	}
}

func mustHash(t *testing.T, e *Envelope) string {
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
		return TypeCommandResult, CommandResult{Stdout: "once"}, nil
	}
	e := req(TypeExecuteCommand, `{"argv":["x"],"idempotency_key":"k"}`)
	var wg sync.WaitGroup
	results := make([]string, 4)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_, resp, err := s.Do(context.Background(), "s", "k", e, fn)
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
	if _, _, err := s.Do(context.Background(), "s", string(make([]byte, 200)), e, fn); errcode.CodeOf(err) != errcode.InvalidArgument {
		t.Fatalf("long key: %v", err)
	}
}
