package waylandtest

import (
	"os/exec"
	"syscall"
)

// dieWithTest makes cmd get SIGKILL if the test binary dies first (a test
// timeout's panic skips the cleanups), so no session outlives its test.
func dieWithTest(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
