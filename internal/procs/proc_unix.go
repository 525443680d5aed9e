//go:build linux || darwin

package procs

import (
	"errors"
	"os"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hostlink/hostlink/internal/sandbox"
)

// sysProc is a command's process group and the descendants seen in it.
type sysProc struct {
	pid       int // also the process group id
	rootStart uint64

	mu         sync.Mutex
	known      map[int]uint64 // descendants ever seen: pid → start time
	graceUntil time.Time      // while terminating, when the hard kill is due
	exited     bool           // the main process has exited
}

func startSys(cmd *exec.Cmd, launch *sandbox.Launch) (*sysProc, error) {
	enableSubreaper()
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	// Its own session, and so its own group: one kill(-pgid) reaches
	// every process that has not left it; those that have are tracked by
	// scanning. A session, not only a group: nothing of the tree can join
	// hostlink's own group (setpgid stays within a session), where a
	// scan would take it for hostlink's and pass over it, and nothing of
	// it can read or stop on a terminal hostlink runs in.
	cmd.SysProcAttr.Setsid = true
	var s *sysProc
	start := func() error {
		// A sandbox with a fork server starts the command itself, as
		// hostlink's child.
		if started, err := launch.Start(cmd); started || err != nil {
			return err
		}
		return spawn(cmd, true)
	}
	err := tracker.start(cmd, start, func(pid int) {
		s = &sysProc{pid: pid, known: map[int]uint64{}}
		if info, ok := readProc(pid); ok {
			s.rootStart = info.start
		}
		tracker.live[s] = struct{}{}
	})
	if err != nil {
		return nil, err
	}
	life.addGroup(s.pid, s.rootStart)
	return s, nil
}

// wait waits for the main process, ends the rest of its tree and reaps it.
func (s *sysProc) wait(p *Process) (State, error) {
	// Where the exit can be seen before the process is reaped, the tree is
	// ended while the main pid, and so the group id, cannot be reused.
	peeked := waitExited(s.pid)
	if peeked {
		s.endTree()
		// Recorded ended while the group id cannot name another group.
		life.endGroup(s.pid)
	}
	err := p.cmd.Wait()
	if !peeked {
		s.endTree()
		life.endGroup(s.pid)
	}
	tracker.remove(s)
	st := State{ExitCode: -1, Ended: time.Now()}
	ps := p.cmd.ProcessState
	if ps == nil {
		return st, err
	}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		err = nil
	}
	ws := ps.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		st.Signal = unix.SignalName(ws.Signal())
	} else {
		st.ExitCode = ws.ExitStatus()
	}
	return st, err
}

// endTree kills whatever is left of the tree once the main process has
// exited: at once, or when a Terminate's grace runs out.
func (s *sysProc) endTree() {
	s.mu.Lock()
	until := s.graceUntil
	s.exited = true
	s.mu.Unlock()
	for time.Now().Before(until) && s.treeAlive() {
		time.Sleep(50 * time.Millisecond)
	}
	s.hardKill()
}

func (s *sysProc) terminate(p *Process, grace time.Duration) {
	s.mu.Lock()
	if s.graceUntil.IsZero() {
		s.graceUntil = time.Now().Add(grace)
	}
	until := s.graceUntil
	s.mu.Unlock()
	s.signal(unix.SIGTERM)
	waitGrace(p.exited, until, s.hardKill)
}

func (s *sysProc) kill(*Process) { s.hardKill() }

func (s *sysProc) release() {}

// signal sends sig to the group and to every descendant seen outside it,
// after a fresh scan, and reports whether anything of the tree other than
// the main process was left before the signal: a running process, or a
// zombie hostlink has yet to reap (zombies of other parents go with them).
func (s *sysProc) signal(sig syscall.Signal) (alive bool) {
	s.mu.Lock()
	exited := s.exited
	s.mu.Unlock()
	if exited && tracker.noOrphans() {
		// Once the main process has exited, whatever is left of its tree,
		// descendants seen before included, is below an orphan reparented
		// to hostlink, its subreaper, and outside hostlink's group (the
		// command has a session of its own). With none, only members of
		// the group that never descended from it could be left, and the
		// group kill reaches them: no need to read the whole process
		// table, which is most of a short command's cost in the daemon.
		unix.Kill(-s.pid, sig)
		return false
	}
	procs := tracker.scan()
	self := os.Getpid()
	unix.Kill(-s.pid, sig)
	s.mu.Lock()
	defer s.mu.Unlock()
	for pid, start := range s.known {
		if info, ok := procs[pid]; ok && info.start == start && (!info.zombie || info.ppid == self) {
			alive = true
			if !info.zombie {
				unix.Kill(pid, sig)
			}
		}
	}
	for pid, info := range procs {
		if info.pgid == s.pid && pid != s.pid && (!info.zombie || info.ppid == self) {
			alive = true
		}
	}
	return alive
}

// hardKill SIGKILLs the tree until nothing of it is left (its zombies
// reaped where they are hostlink's), or for at most two seconds: a
// process forked between a scan and the kill is caught by the next round.
func (s *sysProc) hardKill() {
	for range 200 {
		if !s.signal(unix.SIGKILL) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// treeAlive reports whether any process of the tree other than the main
// process is still running.
func (s *sysProc) treeAlive() bool {
	procs := tracker.scan()
	s.mu.Lock()
	defer s.mu.Unlock()
	for pid, start := range s.known {
		if info, ok := procs[pid]; ok && info.start == start && !info.zombie {
			return true
		}
	}
	for pid, info := range procs {
		if info.pgid == s.pid && pid != s.pid && !info.zombie {
			return true
		}
	}
	return false
}

// procInfo is one process in a scan.
type procInfo struct {
	ppid, pgid int
	start      uint64 // OS-specific units; with the pid, names one process
	zombie     bool
}

// tracker scans the process table for every running command while any
// runs, so that descendants which leave the process group are seen while
// their parents still link them to the command.
var tracker = &treeTracker{live: map[*sysProc]struct{}{}, own: map[int]bool{}}

type treeTracker struct {
	mu      sync.Mutex
	live    map[*sysProc]struct{}
	own     map[int]bool // hostlink's children that are not commands (the guardian)
	running bool         // the periodic scanner is running
}

const scanInterval = 200 * time.Millisecond

// start starts cmd through start (spawn, or the sandbox's fork server)
// and registers it, through register, under the tracker's lock: a scan
// must never see a child hostlink started before it knows the child is
// hostlink's own. A scan that did would take
// it for an orphan reparented to hostlink (the subreaper), claim it for a
// running command, reap it when it exited, and kill it with that command
// (see scan).
func (t *treeTracker) start(cmd *exec.Cmd, start func() error, register func(pid int)) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if err := start(); err != nil {
		return err
	}
	register(cmd.Process.Pid)
	if len(t.live) > 0 && !t.running {
		t.running = true
		go t.loop()
	}
	return nil
}

// startOwned starts a child of hostlink's own that is no command and must
// not die with hostlink (the guardian): scans leave it alone until
// forgetOwned, which its starter calls once it has reaped it.
func (t *treeTracker) startOwned(cmd *exec.Cmd) error {
	return t.start(cmd, func() error { return spawn(cmd, false) }, func(pid int) { t.own[pid] = true })
}

func (t *treeTracker) forgetOwned(pid int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.own, pid)
}

func (t *treeTracker) remove(s *sysProc) {
	t.mu.Lock()
	defer t.mu.Unlock()
	delete(t.live, s)
}

func (t *treeTracker) loop() {
	for {
		time.Sleep(scanInterval)
		t.mu.Lock()
		if len(t.live) == 0 {
			t.running = false
			t.mu.Unlock()
			return
		}
		t.mu.Unlock()
		t.scan()
	}
}

// scan reads the process table, records new descendants of every live
// command, reaps those of its zombies that are hostlink's children, and
// returns the table.
func (t *treeTracker) scan() map[int]procInfo {
	procs, outside := t.scanLocked()
	for _, d := range outside {
		life.addDesc(d.leader, d.pid, d.start)
	}
	return procs
}

// startedLocked is the set of hostlink's children this package started:
// every command's main process and hostlink's own. t.mu is held.
func (t *treeTracker) startedLocked() map[int]bool {
	started := make(map[int]bool, len(t.live)+len(t.own))
	for s := range t.live {
		started[s.pid] = true
	}
	for pid := range t.own {
		started[pid] = true
	}
	return started
}

// descendant is a process of a command's tree seen outside its group.
type descendant struct {
	leader, pid int
	start       uint64
}

func (t *treeTracker) scanLocked() (map[int]procInfo, []descendant) {
	t.mu.Lock()
	defer t.mu.Unlock()
	procs, err := listProcs()
	if err != nil {
		return nil, nil
	}
	children := map[int][]int{}
	for pid, info := range procs {
		children[info.ppid] = append(children[info.ppid], pid)
	}
	self, selfPgid := os.Getpid(), unix.Getpgrp()
	// Every child hostlink starts is registered under t.mu as it is forked
	// (see start), so none of these is mistaken for an orphan below.
	started := t.startedLocked()
	var outside []descendant
	for s := range t.live {
		s.mu.Lock()
		// Roots: the main process and every descendant already known, so
		// that the subtrees of those reparented to hostlink stay linked.
		var queue []int
		if info, ok := procs[s.pid]; ok && info.start == s.rootStart {
			queue = append(queue, s.pid)
		}
		for pid, start := range s.known {
			if info, ok := procs[pid]; ok && info.start == start {
				queue = append(queue, pid)
			}
		}
		// A process orphaned before any scan saw it is reparented to
		// hostlink (the subreaper) with nothing linking it to its command.
		// It is hostlink's child outside hostlink's group that hostlink did
		// not start, so it came from a command running when it started: it
		// is claimed by every such command, and so ended with the first of
		// them to end. (A child started outside this package in a group of
		// its own would be claimed too: every child goes through here.)
		for _, pid := range children[self] {
			info := procs[pid]
			if !started[pid] && info.pgid != selfPgid && s.rootStart != 0 && info.start >= s.rootStart {
				if _, ok := s.known[pid]; !ok {
					queue = append(queue, pid)
				}
			}
		}
		for len(queue) > 0 {
			pid := queue[0]
			queue = queue[1:]
			if pid != s.pid {
				info := procs[pid]
				if old, ok := s.known[pid]; (!ok || old != info.start) && info.pgid != s.pid {
					outside = append(outside, descendant{s.pid, pid, info.start})
				}
				s.known[pid] = info.start
			}
			for _, c := range children[pid] {
				if _, ok := s.known[c]; !ok || s.known[c] != procs[c].start {
					queue = append(queue, c)
				}
			}
		}
		for pid, start := range s.known {
			if info, ok := procs[pid]; ok && info.start == start && info.zombie && info.ppid == self && !started[pid] {
				reap(pid)
			}
		}
		s.mu.Unlock()
	}
	return procs, outside
}
