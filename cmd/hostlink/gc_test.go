package main

import (
	"runtime/debug"
	"testing"
)

// TestTuneGC: the daemon's GOGC is 200 unless the environment names one.
func TestTuneGC(t *testing.T) {
	for _, tc := range []struct {
		env  string
		want int
	}{
		{"", daemonGCPercent},
		{"50", 100}, // left to the runtime (which read the real environment)
		{"off", 100},
	} {
		prev := debug.SetGCPercent(100)
		tuneGC(func(k string) string {
			if k == "GOGC" {
				return tc.env
			}
			return ""
		})
		if got := debug.SetGCPercent(prev); got != tc.want {
			t.Errorf("GOGC=%q: the daemon runs at %d, want %d", tc.env, got, tc.want)
		}
	}
}
