package procs

import (
	"bytes"
	"os"
	"slices"
	"strconv"
	"sync"

	"golang.org/x/sys/unix"
)

var subreaper sync.Once

// enableSubreaper makes hostlink the child subreaper of its descendants:
// one orphaned by a parent's exit (a double fork, or the main process
// exiting) is reparented to hostlink, where the tracker finds and ends it,
// instead of to init, where nothing would link it to its command. Such
// processes become hostlink's children, and this package reaps the ones it
// attributes to a command; other code in hostlink must not start programs
// in their own process groups that orphan grandchildren (they would stay
// zombies until hostlink exits).
func enableSubreaper() {
	subreaper.Do(func() { unix.Prctl(unix.PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) })
}

// waitExited blocks until pid has exited, leaving it unreaped (WNOWAIT),
// so its pid and process group id stay reserved while its tree is ended.
func waitExited(pid int) bool {
	for {
		var info unix.Siginfo
		err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil)
		if err != unix.EINTR {
			return err == nil
		}
	}
}

// reap collects the exit status of a zombie child of hostlink.
func reap(pid int) {
	var ws unix.WaitStatus
	unix.Wait4(pid, &ws, unix.WNOHANG, nil)
}

// noOrphans reports whether hostlink has no child it did not start
// outside its own process group (an orphan the subreaper took in), from
// its own threads' lists of children (/proc/PID/task/TID/children; an
// orphan goes to one of the subreaper's threads) instead of the whole
// process table. It reports false when it cannot tell: no such lists
// (a kernel without CONFIG_PROC_CHILDREN), or a thread that went while
// they were read, whose children may have moved to a thread read before.
// A thread that came is harmless: an orphan goes to the thread group's
// leader unless it is exiting, and no command is forked while t.mu is
// held.
func (t *treeTracker) noOrphans() bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	self := os.Getpid()
	dir := "/proc/" + strconv.Itoa(self) + "/task"
	tasks, err := dirNames(dir)
	if err != nil {
		return false
	}
	selfPgid, started := unix.Getpgrp(), t.startedLocked()
	var buf [4096]byte
	for _, tid := range tasks {
		b, ok := readSmall(dir+"/"+tid+"/children", buf[:])
		if !ok {
			return false
		}
		for f := range bytes.FieldsSeq(b) {
			pid, err := strconv.Atoi(string(f))
			if err != nil {
				return false
			}
			if started[pid] {
				continue
			}
			// A child started elsewhere in hostlink stays in its group.
			if info, ok := readProc(pid); !ok || info.pgid != selfPgid {
				return false
			}
		}
	}
	again, err := dirNames(dir)
	if err != nil {
		return false
	}
	for _, tid := range tasks {
		if _, found := slices.BinarySearch(again, tid); !found {
			return false
		}
	}
	return true
}

// dirNames lists dir, sorted.
func dirNames(dir string) ([]string, error) {
	d, err := os.Open(dir)
	if err != nil {
		return nil, err
	}
	defer d.Close()
	names, err := d.Readdirnames(-1)
	slices.Sort(names)
	return names, err
}

// readSmall reads a small /proc file into buf in one read, through bare
// system calls: os.ReadFile's stat, poller registration and second read
// are most of the cost of reading a process table, one file per process.
// A file that fills buf is reported as unreadable.
func readSmall(path string, buf []byte) ([]byte, bool) {
	fd, err := unix.Open(path, unix.O_RDONLY|unix.O_CLOEXEC, 0)
	if err != nil {
		return nil, false
	}
	defer unix.Close(fd)
	for {
		n, err := unix.Read(fd, buf)
		if err == unix.EINTR {
			continue
		}
		if err != nil || n >= len(buf) {
			return nil, false
		}
		return buf[:n], true
	}
}

// listProcs reads /proc/*/stat.
func listProcs() (map[int]procInfo, error) {
	names, err := dirNames("/proc")
	if err != nil {
		return nil, err
	}
	procs := make(map[int]procInfo, len(names))
	for _, name := range names {
		pid, err := strconv.Atoi(name)
		if err != nil {
			continue
		}
		if info, ok := readProc(pid); ok {
			procs[pid] = info
		}
	}
	return procs, nil
}

// readProc parses /proc/pid/stat: "pid (comm) state ppid pgrp ..." with
// starttime the 22nd field; comm may contain spaces and parentheses, so
// fields are counted from the last ')'.
func readProc(pid int) (procInfo, bool) {
	var buf [1024]byte // 52 fields of at most 20 digits, and a 16-byte comm
	b, ok := readSmall("/proc/"+strconv.Itoa(pid)+"/stat", buf[:])
	if !ok {
		return procInfo{}, false
	}
	i := bytes.LastIndexByte(b, ')')
	if i < 0 {
		return procInfo{}, false
	}
	f := bytes.Fields(b[i+1:])
	if len(f) < 20 {
		return procInfo{}, false
	}
	ppid, err1 := strconv.Atoi(string(f[1]))
	pgid, err2 := strconv.Atoi(string(f[2]))
	start, err3 := strconv.ParseUint(string(f[19]), 10, 64)
	if err1 != nil || err2 != nil || err3 != nil {
		return procInfo{}, false
	}
	return procInfo{ppid: ppid, pgid: pgid, start: start, zombie: f[0][0] == 'Z' || f[0][0] == 'X'}, true
}

// unknownPeer is what Descendant answers for pid 0: on Linux the kernel
// reports a peer in a pid namespace this process cannot see as pid 0, and
// hostlink's descendants are all in its own namespace or below it.
const unknownPeer = false

// KeepDescendants makes this process the child subreaper of its
// descendants (as Start does), so that Descendant finds every one of them
// however its parents exit. A control channel calls it before it serves.
func KeepDescendants() { enableSubreaper() }
