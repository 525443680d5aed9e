package procs

import (
	"os/exec"
	"runtime"

	"github.com/hostlink/hostlink/internal/errcode"
)

// ShellNotAvailable: the requested shell is not installed or does not exist
// on this OS. hostlink never substitutes another shell.
const ShellNotAvailable errcode.Code = "SHELL_NOT_AVAILABLE"

// Shell is a shell resolved to its program.
type Shell struct {
	Name string // sh, bash, zsh, cmd, powershell or pwsh; never auto
	Path string
}

// ResolveShell finds the shell name on this OS ("" means auto). auto is
// zsh on macOS (an error if zsh is missing, as the seed's table has no
// fallback there), bash on Linux falling back to sh, and cmd on Windows.
// sh and zsh exist only on Unix, cmd and powershell only on Windows; bash
// on Windows is whatever bash is on PATH (Git Bash, WSL), and pwsh is
// PowerShell 7 on any OS.
func ResolveShell(name string) (Shell, error) {
	return resolveShell(runtime.GOOS, name, exec.LookPath)
}

func resolveShell(goos, name string, lookPath func(string) (string, error)) (Shell, error) {
	var candidates []string
	switch name {
	case "", "auto":
		switch goos {
		case "darwin":
			candidates = []string{"zsh"}
		case "windows":
			candidates = []string{"cmd"}
		default:
			candidates = []string{"bash", "sh"}
		}
	case "sh", "zsh":
		if goos != "windows" {
			candidates = []string{name}
		}
	case "cmd", "powershell":
		if goos == "windows" {
			candidates = []string{name}
		}
	case "bash", "pwsh":
		candidates = []string{name}
	default:
		return Shell{}, errcode.New(errcode.InvalidArgument, "unknown shell %q", name)
	}
	for _, c := range candidates {
		if p, err := lookPath(c); err == nil {
			return Shell{Name: c, Path: p}, nil
		}
	}
	if len(candidates) == 0 {
		return Shell{}, errcode.New(ShellNotAvailable, "shell %q does not exist on %s", name, goos)
	}
	return Shell{}, errcode.New(ShellNotAvailable, "shell %q is not installed", name).With("shell", name)
}
