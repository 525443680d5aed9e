package sandbox

import "testing"

// LandlockOnly makes this process's commands run as on a machine without
// user namespaces (Landlock alone, probed for real) until the test ends.
func LandlockOnly(t testing.TB) Status {
	t.Helper()
	old := Probe()
	allowed, err := runProbe(false)
	if err != nil {
		t.Fatalf("Landlock alone: %v", err)
	}
	st := landlockOnly(old.LandlockABI, allowed)
	probed.st = st
	t.Cleanup(func() { probed.st = old })
	return st
}

// ProbeAgain measures this machine afresh, as Probe does the first time.
func ProbeAgain() Status { return probe() }
