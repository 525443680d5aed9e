// Package connlimit bounds the connections a local server holds open, so
// that another local user cannot take the daemon down, or lock its user
// out, by opening connections and leaving them idle.
//
// A Tracker admits connections up to a total and a per-peer limit. When a
// limit is reached it makes room rather than turn the newcomer away: it
// closes the connection that matters least, in this order: an idle
// connection that never authenticated (the longest idle first), then a busy
// one that never authenticated, then an idle authenticated one. A busy
// authenticated connection is never closed to make room; if nothing can
// go, the newcomer is refused. Connections that have authenticated (for
// HTTP, a request carried the bearer token; on the control channel, the
// peer was measured as the user) are therefore kept through a flood of
// connections that have not, while the newcomer always gets a slot when
// one can be had, so the user can connect during the flood too.
//
// Accept wraps a listener's Accept so that running out of descriptors
// (EMFILE, ENFILE) or another temporary error is waited out with a
// backoff, as net/http does, instead of ending the accept loop.
package connlimit

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync"
	"time"
)

// Limits bound the connections a Tracker admits.
type Limits struct {
	Max     int // open connections in total
	PerPeer int // open connections from one peer
}

// Tracker admits connections within its Limits.
type Tracker struct {
	lim Limits
	// OnShed, if set, is told (outside the Tracker's lock) of each
	// connection closed to make room or refused, with its peer and why.
	OnShed func(peer, reason string)

	mu      sync.Mutex
	conns   map[*Conn]struct{}
	perPeer map[string]int
	tick    uint64 // orders activity: larger is more recent
}

// NewTracker returns a Tracker for lim; a limit below 1 counts as 1.
func NewTracker(lim Limits) *Tracker {
	lim.Max, lim.PerPeer = max(lim.Max, 1), max(lim.PerPeer, 1)
	return &Tracker{lim: lim, conns: map[*Conn]struct{}{}, perPeer: map[string]int{}}
}

// Reasons given to OnShed.
const (
	ShedTotal   = "too many connections"
	ShedPerPeer = "too many connections from this peer"
)

// Conn is an admitted connection. Closing it frees its slot.
type Conn struct {
	net.Conn
	t    *Tracker
	peer string

	// Guarded by t.mu.
	busy    bool
	trusted bool
	since   uint64 // tick of the last change between busy and idle
	gone    bool   // closed, or chosen to be closed
}

// NetConn is the connection c wraps, for what net.Conn does not carry (a
// Unix socket's descriptors).
func (c *Conn) NetConn() net.Conn { return c.Conn }

// Peer is the key the connection was admitted under.
func (c *Conn) Peer() string { return c.peer }

// Admit tracks c from peer, making room if a limit is reached (see the
// package documentation). It returns nil when there is no room; the caller
// then refuses and closes c. trusted says that the peer is known to be the
// user already.
func (t *Tracker) Admit(c net.Conn, peer string, trusted bool) *Conn {
	t.mu.Lock()
	var victims []*Conn
	var reasons []string
	if t.perPeer[peer] >= t.lim.PerPeer {
		v := t.victimLocked(func(o *Conn) bool { return o.peer == peer })
		if v == nil {
			t.mu.Unlock()
			t.shed(nil, peer, ShedPerPeer)
			return nil
		}
		victims, reasons = append(victims, v), append(reasons, ShedPerPeer)
	}
	if len(t.conns) >= t.lim.Max {
		v := t.victimLocked(func(*Conn) bool { return true })
		if v == nil {
			// Put back a per-peer victim: nothing is admitted.
			for _, v := range victims {
				t.addLocked(v)
			}
			t.mu.Unlock()
			t.shed(nil, peer, ShedTotal)
			return nil
		}
		victims, reasons = append(victims, v), append(reasons, ShedTotal)
	}
	t.tick++
	tc := &Conn{Conn: c, t: t, peer: peer, trusted: trusted, since: t.tick}
	t.addLocked(tc)
	t.mu.Unlock()
	for i, v := range victims {
		v.Conn.Close()
		t.shed(v, v.peer, reasons[i])
	}
	return tc
}

func (t *Tracker) shed(c *Conn, peer, reason string) {
	if t.OnShed != nil {
		t.OnShed(peer, reason)
	}
}

func (t *Tracker) addLocked(c *Conn) {
	c.gone = false
	t.conns[c] = struct{}{}
	t.perPeer[c.peer]++
}

func (t *Tracker) removeLocked(c *Conn) {
	if c.gone {
		return
	}
	c.gone = true
	delete(t.conns, c)
	if t.perPeer[c.peer]--; t.perPeer[c.peer] <= 0 {
		delete(t.perPeer, c.peer)
	}
}

// victimLocked picks the connection to close among those match accepts,
// and removes it; nil if none may go.
func (t *Tracker) victimLocked(match func(*Conn) bool) *Conn {
	var best *Conn
	rank := func(c *Conn) int {
		switch {
		case !c.trusted && !c.busy:
			return 0
		case !c.trusted:
			return 1
		case !c.busy:
			return 2
		}
		return 3 // never
	}
	for c := range t.conns {
		if !match(c) || rank(c) == 3 {
			continue
		}
		if best == nil || rank(c) < rank(best) || (rank(c) == rank(best) && c.since < best.since) {
			best = c
		}
	}
	if best != nil {
		t.removeLocked(best)
	}
	return best
}

// CloseAll closes every connection tracked.
func (t *Tracker) CloseAll() {
	t.mu.Lock()
	all := make([]*Conn, 0, len(t.conns))
	for c := range t.conns {
		all = append(all, c)
	}
	t.mu.Unlock()
	for _, c := range all {
		c.Close()
	}
}

// Len returns the number of connections tracked and how many of them are
// busy.
func (t *Tracker) Len() (open, busy int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	for c := range t.conns {
		if c.busy {
			busy++
		}
	}
	return len(t.conns), busy
}

// SetBusy records whether c is serving a request (busy) or waiting for
// one (idle): idle connections are closed first to make room.
func (c *Conn) SetBusy(busy bool) {
	c.t.mu.Lock()
	defer c.t.mu.Unlock()
	if c.busy != busy {
		c.t.tick++
		c.busy, c.since = busy, c.t.tick
	}
}

// Trust records that c's peer authenticated: c is then kept while
// unauthenticated connections can make room.
func (c *Conn) Trust() {
	c.t.mu.Lock()
	c.trusted = true
	c.t.mu.Unlock()
}

// Close closes the connection and frees its slot.
func (c *Conn) Close() error {
	c.t.mu.Lock()
	c.t.removeLocked(c)
	c.t.mu.Unlock()
	return c.Conn.Close()
}

type ctxKey struct{}

// WithConn returns ctx carrying c (for http.Server.ConnContext), so that a
// handler can Trust the connection its request came on.
func WithConn(ctx context.Context, c net.Conn) context.Context {
	if tc, ok := c.(*Conn); ok {
		return context.WithValue(ctx, ctxKey{}, tc)
	}
	return ctx
}

// Trust marks the connection in ctx (see WithConn), if any, as
// authenticated.
func Trust(ctx context.Context) {
	if c, ok := ctx.Value(ctxKey{}).(*Conn); ok {
		c.Trust()
	}
}

// Backoff bounds for Accept, as net/http's.
const (
	minBackoff = 5 * time.Millisecond
	maxBackoff = time.Second
)

// Accept returns ln's next connection. An error other than ln being
// closed (net.ErrClosed), such as running out of descriptors, is logged
// once per run of errors and waited out with a backoff that doubles from
// 5ms to 1s: the daemon must outlast the flood that caused it.
func Accept(ln net.Listener) (net.Conn, error) {
	var wait time.Duration
	for {
		c, err := ln.Accept()
		if err == nil {
			return c, nil
		}
		if errors.Is(err, net.ErrClosed) {
			return nil, err
		}
		if wait == 0 {
			slog.Warn("accepting a connection failed; retrying", "listener", ln.Addr().String(), "err", err)
			wait = minBackoff
		} else {
			wait = min(2*wait, maxBackoff)
		}
		time.Sleep(wait)
	}
}
