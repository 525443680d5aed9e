package procs

import (
	"os"
	"os/exec"
)

// spawn starts cmd. macOS has no parent-death signal: what a dead hostlink
// left running is ended by its guardian, or at the next start from the
// ledger (see lifeline_unix.go).
func spawn(cmd *exec.Cmd, _ bool) error { return cmd.Start() }

// selfExe is this program.
func selfExe() (string, error) { return os.Executable() }
