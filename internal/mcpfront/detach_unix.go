//go:build !windows

package mcpfront

import "syscall"

// detached starts the daemon in a session of its own, so that the
// client's terminal and process group signals do not reach it.
func detached() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
