//go:build linux || darwin

package procs

import (
	"os"
	"os/signal"
	"slices"
	"syscall"
	"testing"
	"time"
)

func ignoreTerm() { signal.Ignore(syscall.SIGTERM) }

func detachAttr(setsid bool) *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: setsid} }

// gone waits up to d for pid to have exited (a zombie has: an orphan is
// reparented to this test process when it has been a subreaper).
func gone(t *testing.T, pid int, d time.Duration) bool {
	t.Helper()
	for end := time.Now().Add(d); time.Now().Before(end); time.Sleep(20 * time.Millisecond) {
		if info, ok := readProc(pid); syscall.Kill(pid, 0) == syscall.ESRCH || ok && info.zombie {
			return true
		}
	}
	return false
}

func killPid(pid int) { syscall.Kill(pid, syscall.SIGKILL) }

// guardianPid is the running guardian's pid, once the tree it guards has
// a descendant outside its group recorded, if it should have one.
func guardianPid() int {
	for range 500 {
		life.mu.Lock()
		var pid int
		if life.guard != nil {
			pid = life.guard.cmd.Process.Pid
		}
		outside := false
		for _, g := range life.t {
			outside = outside || len(g.desc) > 0
		}
		life.mu.Unlock()
		if pid != 0 && (outside || !slices.Contains(os.Args, "setsid")) {
			return pid
		}
		time.Sleep(10 * time.Millisecond)
	}
	return 0
}
