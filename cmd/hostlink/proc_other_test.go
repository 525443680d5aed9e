//go:build !linux

package main

import (
	"os"
	"syscall"
)

// processGone reports whether pid has ended.
func processGone(pid int) bool {
	p, err := os.FindProcess(pid)
	if err != nil {
		return true
	}
	return p.Signal(syscall.Signal(0)) != nil
}
