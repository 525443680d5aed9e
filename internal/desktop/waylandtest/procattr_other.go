//go:build !linux

package waylandtest

import "os/exec"

// dieWithTest: the sessions run on Linux only.
func dieWithTest(cmd *exec.Cmd) {}
