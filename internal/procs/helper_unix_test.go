//go:build linux || darwin

package procs

import (
	"os/signal"
	"syscall"
	"testing"
	"time"
)

func ignoreTerm() { signal.Ignore(syscall.SIGTERM) }

func detachAttr(setsid bool) *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: setsid} }

// gone waits up to d for pid to have vanished: exited and reaped.
func gone(t *testing.T, pid int, d time.Duration) bool {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if syscall.Kill(pid, 0) == syscall.ESRCH {
			return true
		}
	}
	return false
}
