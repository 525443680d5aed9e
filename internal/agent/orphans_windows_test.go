package agent_test

import (
	"os"
	"time"
	"unsafe"

	"golang.org/x/sys/windows"
)

// killOrphans ends every process a killed helper left behind, its
// descendants included: a child it was starting when it died can stay
// suspended under Wine (whose Job Objects do not always kill on close as
// Windows does), with a console host beside it, and would outlive the test.
//
// Parent ids in a snapshot can be stale and process ids are reused, so a
// process counts as the helper's only if it was created after the helper
// started; the test binary itself is never one (it was once killed this
// way, through a parent id that a reused pid matched).
func killOrphans(parent int, started time.Time) {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPPROCESS, 0)
	if err != nil {
		return
	}
	defer windows.CloseHandle(snap)
	children := map[uint32][]uint32{}
	var pe windows.ProcessEntry32
	pe.Size = uint32(unsafe.Sizeof(pe))
	for err = windows.Process32First(snap, &pe); err == nil; err = windows.Process32Next(snap, &pe) {
		children[pe.ParentProcessID] = append(children[pe.ParentProcessID], pe.ProcessID)
	}
	queue := children[uint32(parent)]
	seen := map[uint32]bool{uint32(parent): true} // parent ids can be stale: no cycles
	for len(queue) > 0 {
		pid := queue[0]
		queue = queue[1:]
		if seen[pid] {
			continue
		}
		seen[pid] = true
		queue = append(queue, children[pid]...)
		if pid == uint32(os.Getpid()) {
			continue
		}
		h, err := windows.OpenProcess(windows.PROCESS_TERMINATE|windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
		if err != nil {
			continue
		}
		var created, exited, kernel, user windows.Filetime
		if windows.GetProcessTimes(h, &created, &exited, &kernel, &user) == nil && !time.Unix(0, created.Nanoseconds()).Before(started) {
			windows.TerminateProcess(h, 1)
		}
		windows.CloseHandle(h)
	}
}
