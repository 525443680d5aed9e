package procs

import (
	"syscall"

	"golang.org/x/sys/windows"
)

// daemonAttr starts a daemon without the front end's console and in a
// process group of its own, so that the front end's Ctrl+C does not reach
// it.
func daemonAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP | windows.DETACHED_PROCESS, HideWindow: true}
}
