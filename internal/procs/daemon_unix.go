//go:build !windows

package procs

import "syscall"

// daemonAttr starts a daemon in a session of its own, so that the front
// end's terminal and process group signals do not reach it.
func daemonAttr() *syscall.SysProcAttr { return &syscall.SysProcAttr{Setsid: true} }
