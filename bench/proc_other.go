//go:build !linux

package main

import (
	"errors"
	"os"
	"time"
)

func treeRSS(pid int) (int64, error) {
	return 0, errors.New("process-tree RSS is measured from /proc, on Linux only")
}

func procRSS(pid int) (int64, error) {
	return 0, errors.New("RSS is measured from /proc, on Linux only")
}

func rssSupported() bool { return false }

// procCPU and treeCPU are not measured off Linux.
func procCPU(int) time.Duration { return 0 }
func treeCPU(int) time.Duration { return 0 }

func killTree(pid int) {
	if p, err := os.FindProcess(pid); err == nil {
		_ = p.Kill()
	}
}
