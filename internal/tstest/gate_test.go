package tstest

import (
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

func TestWaitFor(t *testing.T) {
	var n atomic.Int32
	WaitFor(t, 5*time.Second, "three polls", func() bool { return n.Add(1) >= 3 })
	if got := n.Load(); got != 3 {
		t.Fatalf("cond called %d times, want 3", got)
	}
}

func TestEventuallyTimesOut(t *testing.T) {
	if Eventually(30*time.Millisecond, func() bool { return false }) {
		t.Fatal("Eventually reported a condition that never held")
	}
	if !Eventually(time.Second, func() bool { return true }) {
		t.Fatal("Eventually missed a condition that held at once")
	}
}

func TestToolFindsShell(t *testing.T) {
	shell := "sh"
	if runtime.GOOS == "windows" {
		shell = "cmd"
	}
	if Tool(t, shell) == "" {
		t.Fatal("Tool returned an empty path")
	}
}
