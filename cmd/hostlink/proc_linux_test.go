package main

import (
	"bytes"
	"fmt"
	"os"
)

// processGone reports whether pid has ended: it is not in /proc, or it is
// a zombie nobody reaped (a daemon started by `hostlink mcp` is reparented
// once the front end exits).
func processGone(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return true
	}
	if i := bytes.LastIndexByte(b, ')'); i >= 0 && len(b) > i+2 {
		return b[i+2] == 'Z'
	}
	return false
}
