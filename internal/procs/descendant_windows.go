package procs

import (
	"errors"
	"os"
	"sync"
	"unsafe"

	"golang.org/x/sys/windows"
)

// jobs are the Job Objects of the commands running now (see startSys):
// every process they start is born in its parent's job, and none may
// leave it, whatever happens to its parents.
var jobs = struct {
	sync.Mutex
	m map[job]struct{}
}{m: map[job]struct{}{}}

var isProcessInJob = windows.NewLazySystemDLL("kernel32.dll").NewProc("IsProcessInJob")

// Descendant reports whether the process pid is one hostlink started or
// a descendant of one: one of hostlink's own children, whatever channel
// it calls hostlink back on. It asks whether the process is in the Job
// Object of a command running now, which holds the whole tree however its
// parents exit. A process hostlink cannot open (another user's, or a
// higher integrity level's) is none of its children; one that is gone
// cannot be told, and counts as a child: such a caller is treated as an
// agent, never as the user.
func Descendant(pid int) bool {
	switch {
	case pid == os.Getpid():
		return false
	case pid <= 0:
		return true
	}
	// (PROCESS_QUERY_LIMITED_INFORMATION would do on Windows; Wine's
	// IsProcessInJob wants more.)
	h, err := windows.OpenProcess(windows.PROCESS_QUERY_INFORMATION, false, uint32(pid))
	if err != nil {
		return !errors.Is(err, windows.ERROR_ACCESS_DENIED)
	}
	defer windows.CloseHandle(h)
	jobs.Lock()
	defer jobs.Unlock()
	for j := range jobs.m {
		var in int32
		if r, _, _ := isProcessInJob.Call(uintptr(h), uintptr(j), uintptr(unsafe.Pointer(&in))); r != 0 && in != 0 {
			return true
		}
	}
	return false
}

// KeepDescendants does nothing on Windows: a job holds its processes.
func KeepDescendants() {}
