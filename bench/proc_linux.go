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

// treeRSS is the resident memory of the process tree rooted at pid
// (bytes), a file's pages counted once however many processes of the tree
// map them: anonymous memory is summed per process, and for each mapped
// file range (device, inode, offset) the largest resident size any process
// has of it is added once. Summing VmRSS would count the pages of
// hostlink's binary twice (the stdio front end and the daemon it started
// run one binary), memory the machine holds once; summing PSS would count
// a peer's node pages shared with the TypeScript client's own node only in
// part. (A file range two processes touched in different places counts
// as the larger of the two: a slight undercount, the same for every server.)
func treeRSS(pid int) (int64, error) {
	var anon int64
	files := map[string]int64{}
	for _, p := range treePIDs(pid) {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/smaps", p))
		if err != nil {
			if p == pid {
				return 0, err
			}
			continue
		}
		addSmaps(b, &anon, files)
	}
	total := anon
	for _, n := range files {
		total += n
	}
	return total, nil
}

// addSmaps adds one process's mappings, the text of its /proc/PID/smaps:
// the resident size of anonymous ones to anon, and of file-backed ones to
// files, keyed by device, inode and offset, keeping the largest.
func addSmaps(b []byte, anon *int64, files map[string]int64) {
	key := ""
	for _, ln := range strings.Split(string(b), "\n") {
		f := strings.Fields(ln)
		switch {
		case len(f) >= 5 && strings.Contains(f[0], "-") && !strings.HasSuffix(f[0], ":"):
			// A mapping's header: address perms offset dev inode [path].
			key = ""
			if f[4] != "0" {
				key = f[3] + " " + f[4] + " " + f[2]
			}
		case len(f) >= 2 && f[0] == "Rss:":
			kb, _ := strconv.ParseInt(f[1], 10, 64)
			n := kb * 1024
			if key == "" {
				*anon += n
			} else if n > files[key] {
				files[key] = n
			}
		}
	}
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
