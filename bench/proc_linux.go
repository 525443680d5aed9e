package main

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// treePIDs returns pid and all its descendants, from /proc.
func treePIDs(pid int) []int {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		return []int{pid}
	}
	children := map[int][]int{}
	for _, e := range ents {
		p, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		b, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		f := strings.Fields(string(b[i+1:]))
		if len(f) < 2 {
			continue
		}
		pp, _ := strconv.Atoi(f[1])
		children[pp] = append(children[pp], p)
	}
	out := []int{pid}
	for i := 0; i < len(out); i++ {
		out = append(out, children[out[i]]...)
	}
	return out
}

// treeRSS sums VmRSS (bytes) over the process tree rooted at pid.
func treeRSS(pid int) (int64, error) {
	var total int64
	for _, p := range treePIDs(pid) {
		n, err := procRSS(p)
		if err != nil {
			if p == pid {
				return 0, err
			}
			continue
		}
		total += n
	}
	return total, nil
}

// procRSS returns one process's VmRSS in bytes.
func procRSS(pid int) (int64, error) {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", pid))
	if err != nil {
		return 0, err
	}
	for _, ln := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(ln, "VmRSS:") {
			if f := strings.Fields(ln); len(f) >= 2 {
				kb, _ := strconv.ParseInt(f[1], 10, 64)
				return kb * 1024, nil
			}
		}
	}
	return 0, fmt.Errorf("no VmRSS for pid %d", pid)
}

func rssSupported() bool { return true }

// procCPU is the CPU time process pid (0: this one) has used so far, summed
// over its threads: schedstat's on-CPU nanoseconds, not the 10 ms ticks of
// /proc/PID/stat.
func procCPU(pid int) time.Duration {
	if pid == 0 {
		pid = os.Getpid()
	}
	var total time.Duration
	tasks, _ := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/schedstat", pid))
	for _, t := range tasks {
		b, err := os.ReadFile(t)
		if err != nil {
			continue
		}
		if f := strings.Fields(string(b)); len(f) > 0 {
			ns, _ := strconv.ParseInt(f[0], 10, 64)
			total += time.Duration(ns)
		}
	}
	return total
}

// treeCPU is procCPU summed over the process tree rooted at pid.
func treeCPU(pid int) time.Duration {
	var total time.Duration
	for _, p := range treePIDs(pid) {
		total += procCPU(p)
	}
	return total
}

// killTree kills pid and its descendants.
func killTree(pid int) {
	for _, p := range treePIDs(pid) {
		_ = syscall.Kill(p, syscall.SIGKILL)
	}
}
