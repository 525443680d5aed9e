package procs

import (
	"os/signal"
	"syscall"
	"testing"
	"time"

	"golang.org/x/sys/windows"
)

// ignoreTerm ignores CTRL_BREAK_EVENT, the graceful signal on Windows.
func ignoreTerm() { signal.Ignore(syscall.SIGINT) }

// detachAttr has nothing to detach on Windows: a child cannot leave its
// parent's job.
func detachAttr(bool) *syscall.SysProcAttr { return nil }

// gone waits up to d for pid to have exited.
func gone(t *testing.T, pid int, d time.Duration) bool {
	t.Helper()
	h, err := windows.OpenProcess(windows.SYNCHRONIZE|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, uint32(pid))
	if err != nil {
		return true // no such process
	}
	defer windows.CloseHandle(h)
	ev, _ := windows.WaitForSingleObject(h, uint32(d/time.Millisecond))
	return ev == windows.WAIT_OBJECT_0
}

func killPid(pid int) {
	if h, err := windows.OpenProcess(windows.PROCESS_TERMINATE, false, uint32(pid)); err == nil {
		windows.TerminateProcess(h, 1)
		windows.CloseHandle(h)
	}
}

// guardianPid is 0: Windows needs no guardian.
func guardianPid() int { return 0 }
