package connlimit

import (
	"net"
	"sync"
	"testing"
)

// pipe returns the server end of an in-memory connection; its client end
// is closed with the test.
func pipe(t *testing.T) net.Conn {
	t.Helper()
	s, c := net.Pipe()
	t.Cleanup(func() { s.Close(); c.Close() })
	return s
}

func closed(c *Conn) bool {
	c.t.mu.Lock()
	defer c.t.mu.Unlock()
	return c.gone
}

type state struct {
	peer          string
	busy, trusted bool
}

// TestVictims: at a limit the newcomer gets a slot by closing, in order,
// an idle unauthenticated connection (idle longest first), a busy
// unauthenticated one, an idle authenticated one; never a busy
// authenticated one, in which case the newcomer is refused. Within one
// peer's limit only that peer's connections are candidates.
func TestVictims(t *testing.T) {
	tests := []struct {
		name    string
		lim     Limits
		open    []state // in order of their last activity, oldest first
		newPeer string
		victim  int // index into open; -1: none needed; -2: newcomer refused
		reason  string
	}{
		{"under the limits", Limits{3, 3}, []state{{"a", false, false}, {"a", false, false}}, "a", -1, ""},
		{"idle longest goes first", Limits{3, 9}, []state{{"a", false, false}, {"b", false, false}, {"c", false, false}}, "d", 0, ShedTotal},
		{"unauthenticated before authenticated", Limits{3, 9}, []state{{"a", false, true}, {"b", false, false}, {"c", false, true}}, "d", 1, ShedTotal},
		{"idle before busy", Limits{3, 9}, []state{{"a", true, false}, {"b", false, false}, {"c", true, false}}, "d", 1, ShedTotal},
		{"busy unauthenticated before idle authenticated", Limits{2, 9}, []state{{"a", false, true}, {"b", true, false}}, "c", 1, ShedTotal},
		{"idle authenticated when nothing else", Limits{2, 9}, []state{{"a", true, true}, {"b", false, true}}, "c", 1, ShedTotal},
		{"all busy and authenticated: refused", Limits{2, 9}, []state{{"a", true, true}, {"b", true, true}}, "c", -2, ShedTotal},
		{"per peer: only that peer's", Limits{9, 2}, []state{{"b", false, false}, {"a", true, false}, {"a", false, true}}, "a", 1, ShedPerPeer},
		{"per peer: all busy and authenticated: refused", Limits{9, 2}, []state{{"b", false, false}, {"a", true, true}, {"a", true, true}}, "a", -2, ShedPerPeer},
		{"per peer at the limit, other peers free", Limits{9, 2}, []state{{"a", false, false}, {"b", false, false}}, "a", -1, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			tr := NewTracker(tt.lim)
			var mu sync.Mutex
			var sheds []string
			tr.OnShed = func(peer, reason string) { mu.Lock(); sheds = append(sheds, peer+": "+reason); mu.Unlock() }
			var open []*Conn
			for _, st := range tt.open {
				c := tr.Admit(pipe(t), st.peer, st.trusted)
				if c == nil {
					t.Fatal("setup: refused")
				}
				c.SetBusy(st.busy)
				if !st.busy { // make the order of activity the order listed
					c.SetBusy(true)
					c.SetBusy(false)
				}
				open = append(open, c)
			}
			n := tr.Admit(pipe(t), tt.newPeer, false)
			switch {
			case tt.victim == -2 && n != nil:
				t.Fatal("admitted although nothing could make room")
			case tt.victim != -2 && n == nil:
				t.Fatal("refused")
			}
			for i, c := range open {
				if closed(c) != (i == tt.victim) {
					t.Errorf("connection %d (%+v) closed = %v", i, tt.open[i], closed(c))
				}
			}
			want := len(tt.open) + 1
			if tt.victim != -1 {
				want--
			}
			if got, _ := tr.Len(); got != want {
				t.Errorf("%d tracked, want %d", got, want)
			}
			if tt.reason != "" && (len(sheds) != 1 || sheds[0] != map[bool]string{true: tt.newPeer, false: tt.open[max(tt.victim, 0)].peer}[tt.victim < 0]+": "+tt.reason) {
				t.Errorf("OnShed told %q", sheds)
			}
		})
	}
}

// TestCloseFreesSlot: a closed connection's slot (total and per peer) is
// free again, and closing twice frees it once.
func TestCloseFreesSlot(t *testing.T) {
	tr := NewTracker(Limits{Max: 1, PerPeer: 1})
	c := tr.Admit(pipe(t), "a", true)
	c.SetBusy(true)
	if tr.Admit(pipe(t), "a", false) != nil {
		t.Fatal("admitted past the limit")
	}
	c.Close()
	c.Close()
	if n, _ := tr.Len(); n != 0 {
		t.Fatalf("%d tracked after close", n)
	}
	if tr.Admit(pipe(t), "a", false) == nil || tr.Admit(pipe(t), "b", false) == nil {
		t.Fatal("the slot was not freed")
	}
	if n, busy := tr.Len(); n != 1 || busy != 0 {
		t.Fatalf("%d tracked (%d busy), want 1 idle", n, busy)
	}
}
