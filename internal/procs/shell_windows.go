package procs

import (
	"os/exec"
	"syscall"
)

// command returns the Cmd that runs line in s.
//
// cmd.exe gets its command line verbatim, since it does not follow the
// CommandLineToArgvW rules Go would quote by: /d skips AutoRun commands
// from the registry, /s /c "..." strips exactly the outer quotes and runs
// the rest as typed, and "chcp 65001" first switches the console to UTF-8
// so that cmd.exe and console programs write UTF-8 into the pipes. chcp
// changes the code page of the console the child runs in, which is
// hostlink's own when hostlink has one.
func (s Shell) command(line string) *exec.Cmd {
	switch s.Name {
	case "cmd":
		return &exec.Cmd{
			Path:        s.Path,
			Args:        []string{s.Path},
			SysProcAttr: &syscall.SysProcAttr{CmdLine: `"` + s.Path + `" /d /s /c "chcp 65001 >NUL & ` + line + `"`},
		}
	case "powershell", "pwsh":
		return &exec.Cmd{Path: s.Path, Args: []string{s.Name, "-NoProfile", "-NonInteractive", "-Command", line}}
	}
	return &exec.Cmd{Path: s.Path, Args: []string{s.Name, "-c", line}}
}
