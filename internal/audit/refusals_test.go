package audit

import (
	"fmt"
	"sync"
	"testing"
	"time"
)

type memLog struct {
	mu   sync.Mutex
	recs []Record
}

func (m *memLog) Append(r Record) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.recs = append(m.recs, r)
	return nil
}

func (m *memLog) all() []Record {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]Record(nil), m.recs...)
}

func refused(peer, reason string) Record {
	return Record{Transport: "mcp-http", Op: "http_request_refused", Code: "AUTH_FAILED", Peer: peer, Details: map[string]any{"reason": reason}}
}

func total(recs []Record) int64 {
	var n int64
	for _, r := range recs {
		n += r.Details["count"].(int64)
	}
	return n
}

// TestRefusalsCount: 10,000 refusals of one kind from one source are one
// record at once (count 1) and one summary (count 9,999) when the counts
// are written; another reason or source is its own series.
func TestRefusalsCount(t *testing.T) {
	m := &memLog{}
	f := NewRefusals(m, time.Hour)
	for i := range 10000 {
		f.Refuse("127.0.0.1", refused(fmt.Sprintf("127.0.0.1:%d", 10000+i), "no token"))
	}
	f.Refuse("127.0.0.1", refused("127.0.0.1:1", "bad origin"))
	f.Refuse("uid 1001", Record{Transport: "ipc", Op: "ipc_peer_refused", Code: "PEER_REFUSED", Peer: "uid 1001 pid 7",
		Details: map[string]any{"reason": "peer uid 1001 is not hostlink's uid 1000"}})
	if recs := m.all(); len(recs) != 3 {
		t.Fatalf("%d records before the interval ends, want one per series: %+v", len(recs), recs)
	}
	f.Close()
	recs := m.all()
	if len(recs) != 4 || total(recs) != 10002 {
		t.Fatalf("%d records counting %d: %+v", len(recs), total(recs), recs)
	}
	s := recs[3]
	if s.Details["count"] != int64(9999) || s.Details["source"] != "127.0.0.1" || s.Details["reason"] != "no token" ||
		s.Details["first"] == nil || s.Details["last"] == nil || s.Peer != "127.0.0.1:19999" || !s.Deferred {
		t.Fatalf("summary %+v", s)
	}
	f.Refuse("127.0.0.1", refused("x", "no token"))
	if len(m.all()) != 4 {
		t.Fatal("a refusal after Close was written")
	}
}

// TestRefusalsSources: at most maxRefusalSources sources are counted
// apart; the rest together, so a caller cycling through addresses writes
// a bounded number of records.
func TestRefusalsSources(t *testing.T) {
	m := &memLog{}
	f := NewRefusals(m, time.Hour)
	for i := range 10000 {
		ip := fmt.Sprintf("127.%d.%d.%d", i>>16&255, i>>8&255, i&255)
		f.Refuse(ip, refused(ip+":1", "no token"))
	}
	if n := len(m.all()); n != maxRefusalSources+1 {
		t.Fatalf("%d records for 10,000 sources, want %d", n, maxRefusalSources+1)
	}
	f.Close()
	recs := m.all()
	if total(recs) != 10000 || len(recs) != maxRefusalSources+2 || recs[len(recs)-1].Details["source"] != OtherSources {
		t.Fatalf("%d records counting %d", len(recs), total(recs))
	}
}

// TestRefusalsIntervals: while refusals keep coming there is one summary
// per interval; a series quiet for a whole interval is forgotten and its
// next refusal written at once.
func TestRefusalsIntervals(t *testing.T) {
	m := &memLog{}
	f := NewRefusals(m, time.Hour)
	defer f.Close()
	endInterval := func() {
		f.mu.Lock()
		for _, c := range f.pending {
			c.until = time.Now().Add(-time.Second)
		}
		f.mu.Unlock()
		f.tick()
	}
	f.Refuse("a", refused("a:1", "no token"))
	for round := 1; round <= 3; round++ {
		for range 100 {
			f.Refuse("a", refused("a:1", "no token"))
		}
		endInterval()
		if recs := m.all(); len(recs) != 1+round || recs[round].Details["count"] != int64(100) {
			t.Fatalf("round %d: %+v", round, recs)
		}
	}
	endInterval() // quiet for an interval: forgotten
	if n := len(m.all()); n != 4 {
		t.Fatalf("a quiet interval wrote a record: %d", n)
	}
	f.Refuse("a", refused("a:1", "no token"))
	if recs := m.all(); len(recs) != 5 || recs[4].Details["count"] != int64(1) {
		t.Fatalf("after a quiet interval: %+v", recs)
	}
}
