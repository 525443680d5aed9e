//go:build linux || darwin

package procs

import "os"

// maxAncestry bounds the parent links Descendant follows, and its
// restarts.
const maxAncestry = 4096

// Descendant reports whether the process pid is one this process started
// or a descendant of one: one of hostlink's own children (a command, an
// agent runtime, a helper, or anything they started), whatever channel it
// calls hostlink back on. It follows the process's parent links up to
// this process. On Linux this process is the child subreaper of its
// descendants (see KeepDescendants), so one whose parent exited (a double
// fork, setsid) is reparented to hostlink and stays in its tree; macOS
// has no subreaper, and such a process, reparented to launchd, is no
// longer told apart. A parent that exits while its link is followed (its
// pid gone, or taken by a younger process) is seen as such, and the walk
// starts again from pid. When it cannot tell (pid itself is gone), it
// answers true: such a caller is treated as an agent, never as the user.
func Descendant(pid int) bool {
	self := os.Getpid()
	switch {
	case pid == self:
		return false
	case pid <= 0:
		return unknownPeer
	}
	for range maxAncestry {
		if yes, sure := ancestryReaches(pid, self); sure {
			return yes
		}
	}
	return true
}

// ancestryReaches follows pid's parent links; sure is false when a link
// changed under it (an ancestor exited), and the walk must start again.
func ancestryReaches(pid, self int) (yes, sure bool) {
	info, ok := readProc(pid)
	if !ok {
		return true, true // gone: cannot tell
	}
	cur := pid
	for range maxAncestry {
		switch {
		case info.ppid == self:
			return true, true
		case info.ppid <= 1:
			return false, true // init or launchd, or outside this pid namespace
		}
		parent, ok := readProc(info.ppid)
		if !ok || parent.start > info.start {
			// The parent exited since cur was read: cur has been
			// reparented, and what came before it may have changed too.
			if cur == pid {
				if again, ok := readProc(pid); !ok || again.start != info.start {
					return true, true
				}
			}
			return false, false
		}
		cur, info = info.ppid, parent
	}
	return true, true
}
