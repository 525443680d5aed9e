package procs

import (
	"unsafe"

	"golang.org/x/sys/windows"
)

// job is a Job Object that kills its processes when its last handle
// closes: hostlink holds the only one, so hostlink exiting, even by a
// crash, ends every command it started.
type job windows.Handle

func newJob() (job, error) {
	h, err := windows.CreateJobObject(nil, nil)
	if err != nil {
		return 0, err
	}
	info := windows.JOBOBJECT_EXTENDED_LIMIT_INFORMATION{
		BasicLimitInformation: windows.JOBOBJECT_BASIC_LIMIT_INFORMATION{
			LimitFlags: windows.JOB_OBJECT_LIMIT_KILL_ON_JOB_CLOSE,
		},
	}
	if _, err := windows.SetInformationJobObject(h, windows.JobObjectExtendedLimitInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info))); err != nil {
		windows.CloseHandle(h)
		return 0, err
	}
	return job(h), nil
}

// assign puts the process pid into the job; its children will be born in
// it.
func (j job) assign(pid int) error {
	p, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE, false, uint32(pid))
	if err != nil {
		return err
	}
	defer windows.CloseHandle(p)
	return windows.AssignProcessToJobObject(windows.Handle(j), p)
}

// basicAccounting is JOBOBJECT_BASIC_ACCOUNTING_INFORMATION, which
// x/sys/windows does not define.
type basicAccounting struct {
	TotalUserTime             int64
	TotalKernelTime           int64
	ThisPeriodTotalUserTime   int64
	ThisPeriodTotalKernelTime int64
	TotalPageFaultCount       uint32
	TotalProcesses            uint32
	ActiveProcesses           uint32
	TotalTerminatedProcesses  uint32
}

// active returns the number of processes in the job that are still
// running.
func (j job) active() (int, error) {
	var info basicAccounting
	err := windows.QueryInformationJobObject(windows.Handle(j), windows.JobObjectBasicAccountingInformation,
		uintptr(unsafe.Pointer(&info)), uint32(unsafe.Sizeof(info)), nil)
	return int(info.ActiveProcesses), err
}

// terminate ends every process in the job with exit code 1.
func (j job) terminate() error { return windows.TerminateJobObject(windows.Handle(j), 1) }

func (j job) close() error { return windows.CloseHandle(windows.Handle(j)) }

// resumeProcess resumes the threads of a process created suspended. Go's
// os.StartProcess closes the main thread's handle, so the thread is found
// again through a snapshot; a suspended new process has only that thread.
func resumeProcess(pid int) error {
	snap, err := windows.CreateToolhelp32Snapshot(windows.TH32CS_SNAPTHREAD, 0)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(snap)
	te := windows.ThreadEntry32{Size: uint32(unsafe.Sizeof(windows.ThreadEntry32{}))}
	resumed := false
	for err = windows.Thread32First(snap, &te); err == nil; err = windows.Thread32Next(snap, &te) {
		if te.OwnerProcessID != uint32(pid) {
			continue
		}
		t, err := windows.OpenThread(windows.THREAD_SUSPEND_RESUME, false, te.ThreadID)
		if err != nil {
			return err
		}
		_, err = windows.ResumeThread(t)
		windows.CloseHandle(t)
		if err != nil {
			return err
		}
		resumed = true
	}
	if !resumed {
		return windows.ERROR_NOT_FOUND
	}
	return nil
}
