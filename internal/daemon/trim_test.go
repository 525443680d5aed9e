package daemon

import (
	"context"
	"runtime/metrics"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/memtrim"
	"github.com/hostlink/hostlink/internal/ops"
)

// forcedGCs counts the collections something forced: a trim is one.
func forcedGCs() uint64 {
	s := []metrics.Sample{{Name: "/gc/cycles/forced:gc-cycles"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// settled waits until no collection has been forced for twice the quiet
// period, so that a trim of an earlier test's daemon is not taken for
// this one's.
func settled(t *testing.T) uint64 {
	t.Helper()
	n := forcedGCs()
	for {
		time.Sleep(2 * memtrim.DefaultQuiet)
		m := forcedGCs()
		if m == n {
			return n
		}
		n = m
	}
}

// TestCallsThenTrim: the daemon gives memory back once its calls stop,
// and not before a call.
func TestCallsThenTrim(t *testing.T) {
	d, _ := openTemp(t)
	before := settled(t)
	if _, err := d.Registry.Call(context.Background(), ops.Caller{Transport: audit.MCPStdio}, "list_workdirs", []byte(`{}`), nil); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(30 * time.Second)
	for forcedGCs() == before {
		if time.Now().After(deadline) {
			t.Fatal("no trim after the daemon's calls stopped")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
