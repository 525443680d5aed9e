// Package memtrim gives the memory a burst of calls used back to the system
// once the calls stop. The daemon runs with a GOGC above Go's default
// (cmd/hostlink/gc.go): while calls come that saves CPU, but it keeps a
// heap several times the live one resident, and Go's background scavenger
// returns only what lies above the heap's goal. A daemon on a person's
// computer spends most of its life waiting for the next call, and should
// wait small: after a quiet period the Trimmer collects and returns every
// free page (debug.FreeOSMemory), once per burst, and sets no timer while
// nothing runs.
package memtrim

import (
	"runtime/debug"
	"sync"
	"time"
)

// DefaultQuiet is how long the daemon waits after its last call before it
// trims: longer than the gaps between the calls of one burst (an agent's
// tool calls within a step, a client's paging), shorter than most of a
// model's turns, the gaps a daemon serving an agent mostly waits in. A
// trim costs a garbage collection of the live heap, a millisecond or two.
const DefaultQuiet = time.Second

// Trimmer trims once no call has run for its quiet period. Its methods
// are safe for concurrent use.
type Trimmer struct {
	quiet time.Duration
	trim  func()

	mu     sync.Mutex
	active int  // calls running
	dirty  bool // a call ran since the last trim
	timer  *time.Timer
}

// New returns a Trimmer that trims after quiet without a call.
func New(quiet time.Duration) *Trimmer {
	return newTrimmer(quiet, debug.FreeOSMemory)
}

func newTrimmer(quiet time.Duration, trim func()) *Trimmer {
	t := &Trimmer{quiet: quiet, trim: trim}
	t.timer = time.AfterFunc(quiet, t.fire)
	t.timer.Stop()
	return t
}

// Begin counts a call as running until the returned end is called; the
// quiet period starts when the last running call ends.
func (t *Trimmer) Begin() (end func()) {
	t.mu.Lock()
	t.active++
	t.dirty = true
	t.timer.Stop()
	t.mu.Unlock()
	var once sync.Once
	return func() { once.Do(t.end) }
}

// Touch counts work that is no call, done by the time Touch is called (the
// daemon's start, a session's opening), so that what it left behind goes
// back after the quiet period too.
func (t *Trimmer) Touch() { t.Begin()() }

func (t *Trimmer) end() {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.active--
	if t.active == 0 {
		t.timer.Reset(t.quiet)
	}
}

// fire trims unless a call began after the timer fired, or none ran since
// the last trim.
func (t *Trimmer) fire() {
	t.mu.Lock()
	run := t.active == 0 && t.dirty
	if run {
		t.dirty = false
	}
	t.mu.Unlock()
	if run {
		t.trim()
	}
}
