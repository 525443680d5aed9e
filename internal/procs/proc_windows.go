package procs

import (
	"errors"
	"os/exec"
	"sync"
	"syscall"
	"time"

	"golang.org/x/sys/windows"

	"github.com/hostlink/hostlink/internal/sandbox"
)

// sysProc is a command's Job Object.
type sysProc struct {
	pid int
	job job

	mu         sync.Mutex
	graceUntil time.Time // while terminating, when the hard kill is due
}

// startSys starts cmd suspended in a new process group, puts it in a new
// Job Object and only then lets it run, so not even its first child can be
// born outside the job (assigning after an unsuspended start would race
// with that).
func startSys(cmd *exec.Cmd, _ *sandbox.Launch) (*sysProc, error) {
	j, err := newJob()
	if err != nil {
		return nil, err
	}
	if cmd.SysProcAttr == nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{}
	}
	cmd.SysProcAttr.CreationFlags |= windows.CREATE_NEW_PROCESS_GROUP | windows.CREATE_SUSPENDED
	// With a console (hostlink run from a terminal) children share it, and
	// CTRL_BREAK_EVENT can reach them; without one (a background daemon),
	// each console child would open a window, so it gets a hidden console
	// and only the hard kill can end it.
	if _, err := windows.GetConsoleCP(); err != nil {
		cmd.SysProcAttr.CreationFlags |= windows.CREATE_NO_WINDOW
	}
	if err := cmd.Start(); err != nil {
		j.close()
		return nil, err
	}
	s := &sysProc{pid: cmd.Process.Pid, job: j}
	jobs.Lock()
	jobs.m[j] = struct{}{}
	jobs.Unlock()
	if err := j.admit(s.pid); err != nil {
		j.terminate()
		cmd.Process.Kill()
		cmd.Wait()
		s.release()
		return nil, err
	}
	return s, nil
}

// wait waits for the main process, then ends the rest of the job: at once,
// or when a Terminate's grace runs out.
func (s *sysProc) wait(p *Process) (State, error) {
	err := p.cmd.Wait()
	s.mu.Lock()
	until := s.graceUntil
	s.mu.Unlock()
	for time.Now().Before(until) && s.jobAlive() {
		time.Sleep(50 * time.Millisecond)
	}
	s.hardKill()
	st := State{ExitCode: -1, Ended: time.Now()}
	if p.cmd.ProcessState == nil {
		return st, err
	}
	var exitErr *exec.ExitError
	if errors.As(err, &exitErr) {
		err = nil
	}
	st.ExitCode = p.cmd.ProcessState.ExitCode()
	return st, err
}

func (s *sysProc) terminate(p *Process, grace time.Duration) {
	s.mu.Lock()
	if s.graceUntil.IsZero() {
		s.graceUntil = time.Now().Add(grace)
	}
	until := s.graceUntil
	s.mu.Unlock()
	// Fails when hostlink shares no console with the child (a daemon, or
	// Wine without a display); then the grace passes and the hard kill
	// follows.
	windows.GenerateConsoleCtrlEvent(windows.CTRL_BREAK_EVENT, uint32(s.pid))
	waitGrace(p.exited, until, s.hardKill)
}

func (s *sysProc) kill(*Process) { s.hardKill() }

// hardKill terminates the job and waits, up to two seconds, for its
// processes to be gone.
func (s *sysProc) hardKill() {
	for range 200 {
		if !s.jobAlive() {
			return
		}
		s.job.terminate()
		time.Sleep(10 * time.Millisecond)
	}
}

func (s *sysProc) jobAlive() bool {
	n, err := s.job.active()
	return err == nil && n > 0
}

// release closes the job handle once the tree is gone.
func (s *sysProc) release() {
	jobs.Lock()
	delete(jobs.m, s.job)
	jobs.Unlock()
	s.job.close()
}
