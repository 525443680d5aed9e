package procs

import (
	"os"
	"os/exec"

	"github.com/hostlink/hostlink/internal/errcode"
)

// Daemon is a hostlink daemon started by a front end (`hostlink mcp`)
// with StartDaemon.
type Daemon struct{ cmd *exec.Cmd }

// StartDaemon starts argv, a hostlink daemon, for a front end that needs
// one: the other exception, beside StartDetached, to "nothing outlives
// hostlink", because the daemon serves every client of the user and is the
// one that ends what it starts. It runs in a session (Windows: a process
// group, without a console) of its own, so that the front end's terminal,
// Ctrl+C and process group do not reach it; it is not tracked, not killed
// by KillAll and not given the parent-death signal. Its standard output and
// error are stdout and stderr.
func StartDaemon(argv []string, stdout, stderr *os.File) (*Daemon, error) {
	if len(argv) == 0 {
		return nil, errcode.New(errcode.InvalidArgument, "no program")
	}
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdout, cmd.Stderr = stdout, stderr
	cmd.SysProcAttr = daemonAttr()
	if err := cmd.Start(); err != nil {
		return nil, startError(argv[0], err)
	}
	return &Daemon{cmd: cmd}, nil
}

// Wait waits for the daemon to exit (call it once) and returns how it
// ended, as exec.Cmd.Wait does.
func (d *Daemon) Wait() error { return d.cmd.Wait() }

// Kill ends the daemon at once.
func (d *Daemon) Kill() error { return d.cmd.Process.Kill() }
