package daemon

import (
	"testing"
	"time"
)

// TestIdleWatch: the watch fires only when its period ends with nothing
// open and no work running, and never with period 0. The period's end is
// called directly (expire), so that nothing depends on timing.
func TestIdleWatch(t *testing.T) {
	busy := false
	w := newIdleWatch(time.Hour, func() bool { return busy })
	fired := func() bool {
		select {
		case <-w.Fired():
			return true
		default:
			return false
		}
	}
	w.conn(true)
	w.expire()
	if fired() {
		t.Fatal("fired with a connection open")
	}
	w.conn(false)
	busy = true
	w.expire()
	if fired() {
		t.Fatal("fired while work runs")
	}
	busy = false
	w.expire()
	if !fired() {
		t.Fatal("did not fire when idle")
	}
	w.expire() // a second end changes nothing

	never := newIdleWatch(0, nil)
	never.enter()
	never.leave()
	if never.timer != nil {
		t.Fatal("a period of 0 set a timer")
	}
}
