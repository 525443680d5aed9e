package tstest

import (
	"testing"
	"time"
)

// pollInterval is how often WaitFor checks its condition. It is short
// because the conditions are cheap and most become true within
// milliseconds.
const pollInterval = 10 * time.Millisecond

// WaitFor calls cond until it returns true, failing the test with what if it
// has not within timeout. It is for conditions another process or
// goroutine makes true with no event to wait on (a file appearing, a
// process exiting); where there is an event, wait on it instead. The
// timeout is a bound against hanging, never a measurement: choose it
// generously (seconds), since CI machines are busy.
func WaitFor(t testing.TB, timeout time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out after %v waiting for %s", timeout, what)
		}
		time.Sleep(pollInterval)
	}
}

// Eventually is WaitFor that reports instead of failing: it returns whether
// cond became true within timeout.
func Eventually(timeout time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(timeout)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(pollInterval)
	}
	return true
}
