package procs

import "golang.org/x/sys/unix"

// macOS has no subreaper: a descendant orphaned before a scan saw it is
// reparented to launchd and cannot be linked to its command any more.
func enableSubreaper() {}

// waitExited reports false: without waitid's WNOWAIT the tree is ended
// after the main process is reaped, through its (still valid) group id
// and the descendants already seen.
func waitExited(int) bool { return false }

// noOrphans cannot tell without a subreaper: every end of a tree reads
// the process table.
func (*treeTracker) noOrphans() bool { return false }

// reap is never needed: orphans go to launchd, which reaps them.
func reap(int) {}

const zombie = 5 // SZOMB in <sys/proc.h>

// listProcs reads the process table through sysctl kern.proc.all.
func listProcs() (map[int]procInfo, error) {
	kps, err := unix.SysctlKinfoProcSlice("kern.proc.all")
	if err != nil {
		return nil, err
	}
	procs := make(map[int]procInfo, len(kps))
	for i := range kps {
		procs[int(kps[i].Proc.P_pid)] = info(&kps[i])
	}
	return procs, nil
}

func readProc(pid int) (procInfo, bool) {
	kps, err := unix.SysctlKinfoProcSlice("kern.proc.pid", pid)
	if err != nil || len(kps) != 1 {
		return procInfo{}, false
	}
	return info(&kps[0]), true
}

func info(kp *unix.KinfoProc) procInfo {
	t := kp.Proc.P_starttime
	return procInfo{
		ppid:   int(kp.Eproc.Ppid),
		pgid:   int(kp.Eproc.Pgid),
		start:  uint64(t.Sec)*1e6 + uint64(t.Usec),
		zombie: kp.Proc.P_stat == zombie,
	}
}

// unknownPeer is what Descendant answers for pid 0: a peer macOS did not
// give the pid of is treated as an agent.
const unknownPeer = true

// KeepDescendants does nothing on macOS, which has no subreaper: see
// Descendant.
func KeepDescendants() {}
