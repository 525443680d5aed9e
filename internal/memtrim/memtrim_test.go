package memtrim

import (
	"runtime"
	"runtime/debug"
	"runtime/metrics"
	"testing"
	"time"
)

const quiet = 20 * time.Millisecond

// counting returns a Trimmer that reports each trim on its channel.
func counting() (*Trimmer, chan struct{}) {
	trims := make(chan struct{}, 16)
	return newTrimmer(quiet, func() { trims <- struct{}{} }), trims
}

// trimmed waits for a trim, failing the test after a long time; a trim the
// quiet period should bring can be late on a busy machine but never lost.
func trimmed(t *testing.T, trims chan struct{}) {
	t.Helper()
	select {
	case <-trims:
	case <-time.After(30 * time.Second):
		t.Fatal("no trim after the calls ended")
	}
}

// none checks that no trim comes within many quiet periods.
func none(t *testing.T, trims chan struct{}) {
	t.Helper()
	select {
	case <-trims:
		t.Fatal("trimmed when it should not have")
	case <-time.After(10 * quiet):
	}
}

func TestTrimmer(t *testing.T) {
	tests := []struct {
		name string
		run  func(t *testing.T, tr *Trimmer, trims chan struct{})
	}{
		{"no call, no trim", func(t *testing.T, tr *Trimmer, trims chan struct{}) {
			none(t, trims)
		}},
		{"one trim after a burst", func(t *testing.T, tr *Trimmer, trims chan struct{}) {
			for i := 0; i < 3; i++ {
				tr.Begin()()
			}
			trimmed(t, trims)
			none(t, trims)
		}},
		{"a touch is a burst", func(t *testing.T, tr *Trimmer, trims chan struct{}) {
			tr.Touch()
			trimmed(t, trims)
			none(t, trims)
		}},
		{"a touch during a call waits for it", func(t *testing.T, tr *Trimmer, trims chan struct{}) {
			end := tr.Begin()
			tr.Touch()
			none(t, trims)
			end()
			trimmed(t, trims)
		}},
		{"not while a call runs", func(t *testing.T, tr *Trimmer, trims chan struct{}) {
			end := tr.Begin()
			none(t, trims)
			end()
			trimmed(t, trims)
		}},
		{"not while the other of two calls runs", func(t *testing.T, tr *Trimmer, trims chan struct{}) {
			a, b := tr.Begin(), tr.Begin()
			a()
			none(t, trims)
			b()
			trimmed(t, trims)
		}},
		{"an end called twice counts once", func(t *testing.T, tr *Trimmer, trims chan struct{}) {
			a := tr.Begin()
			a()
			trimmed(t, trims)
			b := tr.Begin()
			a()
			none(t, trims)
			b()
			trimmed(t, trims)
		}},
		{"again after the next call", func(t *testing.T, tr *Trimmer, trims chan struct{}) {
			tr.Begin()()
			trimmed(t, trims)
			tr.Begin()()
			trimmed(t, trims)
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tr, trims := counting()
			tc.run(t, tr, trims)
		})
	}
}

// TestTrimReturnsMemory: what a call left behind goes back to the system
// once the calls stop, not at the runtime's leisure.
func TestTrimReturnsMemory(t *testing.T) {
	done := make(chan struct{})
	tr := newTrimmer(quiet, func() { debug.FreeOSMemory(); close(done) })
	end := tr.Begin()
	// Garbage the size of a large result, kept live until the call ends
	// so that no collection frees it while it is made.
	const size = 64 << 20
	chunks := make([][]byte, 0, size>>20)
	for len(chunks) < cap(chunks) {
		b := make([]byte, 1<<20)
		for i := 0; i < len(b); i += 4096 {
			b[i] = 1
		}
		chunks = append(chunks, b)
	}
	runtime.KeepAlive(chunks)
	before := released()
	end()
	select {
	case <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("no trim after the call ended")
	}
	// Signed: the runtime reuses released pages, so the count can fall.
	if got := int64(released()) - int64(before); got < size*3/4 {
		t.Fatalf("the trim gave back %d MiB of the call's %d MiB", got>>20, size>>20)
	}
}

// released is the heap memory returned to the system, in bytes.
func released() uint64 {
	s := []metrics.Sample{{Name: "/memory/classes/heap/released:bytes"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}
