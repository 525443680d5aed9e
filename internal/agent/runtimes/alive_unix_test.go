//go:build !windows

package runtimes_test

import "syscall"

// alive reports whether process pid exists.
func alive(pid int) bool { return syscall.Kill(pid, 0) == nil }
