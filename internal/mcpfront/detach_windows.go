package mcpfront

import (
	"syscall"

	"golang.org/x/sys/windows"
)

// detached starts the daemon without the client's console and in a
// process group of its own, so that the client's Ctrl+C does not reach it.
func detached() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{CreationFlags: windows.CREATE_NEW_PROCESS_GROUP | windows.DETACHED_PROCESS, HideWindow: true}
}
