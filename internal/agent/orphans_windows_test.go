package agent_test

import (
	"unsafe"

	"golang.org/x/sys/windows"
)

// killOrphans ends what a killed helper left behind: a child it was
// starting when it died can stay suspended under Wine, whose Job Objects
// do not always kill on close as Windows does, and would outlive the test.
func killOrphans(parent int) {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPPROCESS, 0)
	if err != nil {
		return
	}
	defer windows.CloseHandle(snap)
	var pe windows.ProcessEntry32
	pe.Size = uint32(unsafe.Sizeof(pe))
	for err = windows.Process32First(snap, &pe); err == nil; err = windows.Process32Next(snap, &pe) {
		if int(pe.ParentProcessID) != parent {
			continue
		}
		if h, err := windows.OpenProcess(windows.PROCESS_TERMINATE, false, pe.ProcessID); err == nil {
			windows.TerminateProcess(h, 1)
			windows.CloseHandle(h)
		}
	}
}
