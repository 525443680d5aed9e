package audit

import (
	"sync"
	"time"
)

// Appender is what Refusals writes to: a Log, or a test's stand-in.
type Appender interface {
	Append(Record) error
}

// DefaultRefusalInterval is Refusals' interval when none is given.
const DefaultRefusalInterval = time.Minute

// maxRefusalSources bounds the sources Refusals counts apart; refusals
// from further sources are counted together under OtherSources, so that
// a caller cycling through addresses (127.0.0.0/8 has millions) cannot
// grow the log or the memory.
const maxRefusalSources = 64

// OtherSources is the source under which refusals are counted once
// maxRefusalSources sources are already being counted.
const OtherSources = "(other sources)"

// Refusals writes refused requests (no or a wrong token, another user, a
// connection shed at a limit) to the audit log without letting a flood of
// them grow it: the first refusal of a kind — transport, operation, code,
// reason — from a source is written at once, the ones after it are
// counted, and while they keep coming one record per interval says how
// many there were. A kind and source quiet for a whole interval starts
// over. Records carry details "source", "reason" and "count" (1 for the
// first; for a summary, how many it stands for, with "first" and "last"
// times). They are Deferred: a refusal changes nothing that needs a sync.
type Refusals struct {
	log      Appender
	interval time.Duration

	mu      sync.Mutex
	pending map[refusalKey]*refusalCount
	timer   *time.Timer
	closed  bool
}

type refusalKey struct {
	transport                Transport
	op, code, source, reason string
}

type refusalCount struct {
	until       time.Time // end of the current interval
	n           int64     // refusals since the last record
	first, last time.Time
	peer        string // of the latest refusal
}

// NewRefusals returns Refusals writing to log, counting over interval
// (DefaultRefusalInterval when not positive).
func NewRefusals(log Appender, interval time.Duration) *Refusals {
	if interval <= 0 {
		interval = DefaultRefusalInterval
	}
	return &Refusals{log: log, interval: interval, pending: map[refusalKey]*refusalCount{}}
}

// Refuse records one refused request: r is its record (Transport, Op,
// Code, Peer, and the reason in Details["reason"]), source says who it
// came from for counting: an IP address rather than the address and port,
// a uid rather than a process.
func (f *Refusals) Refuse(source string, r Record) {
	if f == nil {
		return
	}
	reason, _ := r.Details["reason"].(string)
	now := time.Now()
	f.mu.Lock()
	if f.closed {
		f.mu.Unlock()
		return
	}
	k := refusalKey{r.Transport, r.Op, r.Code, source, reason}
	c, ok := f.pending[k]
	if !ok && len(f.pending) >= maxRefusalSources {
		k.source = OtherSources
		c, ok = f.pending[k]
	}
	if ok {
		if c.n == 0 {
			c.first = now
		}
		c.n++
		c.last, c.peer = now, r.Peer
		f.mu.Unlock()
		return
	}
	f.pending[k] = &refusalCount{until: now.Add(f.interval)}
	if f.timer == nil {
		f.timer = time.AfterFunc(f.interval, f.tick)
	}
	f.mu.Unlock()
	f.log.Append(refusalRecord(k, r.Peer, 1, now, now, false))
}

// tick writes the counts of the intervals that ended and forgets the
// kinds and sources that were quiet for one.
func (f *Refusals) tick() {
	now := time.Now()
	var out []Record
	f.mu.Lock()
	next := now.Add(f.interval)
	for k, c := range f.pending {
		switch {
		case c.until.After(now):
			next = minTime(next, c.until)
			continue
		case c.n == 0:
			delete(f.pending, k)
			continue
		}
		out = append(out, refusalRecord(k, c.peer, c.n, c.first, c.last, true))
		c.n, c.until = 0, now.Add(f.interval)
	}
	f.timer = nil
	if len(f.pending) > 0 && !f.closed {
		f.timer = time.AfterFunc(next.Sub(now), f.tick)
	}
	f.mu.Unlock()
	for _, r := range out {
		f.log.Append(r)
	}
}

// Close writes the counts not yet written and stops counting.
func (f *Refusals) Close() {
	if f == nil {
		return
	}
	var out []Record
	f.mu.Lock()
	f.closed = true
	if f.timer != nil {
		f.timer.Stop()
		f.timer = nil
	}
	for k, c := range f.pending {
		if c.n > 0 {
			out = append(out, refusalRecord(k, c.peer, c.n, c.first, c.last, true))
		}
	}
	clear(f.pending)
	f.mu.Unlock()
	for _, r := range out {
		f.log.Append(r)
	}
}

func refusalRecord(k refusalKey, peer string, n int64, first, last time.Time, summary bool) Record {
	d := map[string]any{"source": k.source, "count": n}
	if k.reason != "" {
		d["reason"] = k.reason
	}
	if summary {
		d["first"] = first.UTC().Format(time.RFC3339Nano)
		d["last"] = last.UTC().Format(time.RFC3339Nano)
	}
	return Record{Time: last, Transport: k.transport, Peer: peer, Op: k.op, Code: k.code, Details: d, Deferred: true}
}

func minTime(a, b time.Time) time.Time {
	if a.Before(b) {
		return a
	}
	return b
}
