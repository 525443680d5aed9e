//go:build !windows

package procs

import "os/exec"

// command returns the Cmd that runs line in s.
func (s Shell) command(line string) *exec.Cmd {
	if s.Name == "pwsh" {
		return &exec.Cmd{Path: s.Path, Args: []string{s.Name, "-NoProfile", "-NonInteractive", "-Command", line}}
	}
	return &exec.Cmd{Path: s.Path, Args: []string{s.Name, "-c", line}}
}
