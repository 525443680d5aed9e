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

// admit puts the suspended process pid into the job, where its children
// will be born, and only then lets it run. One handle serves both: Go's
// os.Process still holds its own, so the pid cannot name another process
// meanwhile.
func (j job) admit(pid int) error {
	p, err := windows.OpenProcess(windows.PROCESS_SET_QUOTA|windows.PROCESS_TERMINATE|windows.PROCESS_SUSPEND_RESUME, false, uint32(pid))
	if err != nil {
		return err
	}
	defer windows.CloseHandle(p)
	if err := windows.AssignProcessToJobObject(windows.Handle(j), p); err != nil {
		return err
	}
	return resumeProcess(p)
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

// ntResumeProcess resumes every thread of a process. Go's os.StartProcess
// closes the main thread's handle, and finding the thread again through a
// snapshot of every thread on the system costs more and can miss it.
var ntResumeProcess = windows.NewLazySystemDLL("ntdll.dll").NewProc("NtResumeProcess")

// resumeProcess resumes the process p, created suspended.
func resumeProcess(p windows.Handle) error {
	if err := ntResumeProcess.Find(); err != nil {
		return err
	}
	if st, _, _ := ntResumeProcess.Call(uintptr(p)); st != 0 {
		return windows.NTStatus(st).Errno()
	}
	return nil
}
