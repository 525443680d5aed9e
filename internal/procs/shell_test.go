package procs

import (
	"errors"
	"runtime"
	"testing"

	"github.com/hostlink/hostlink/internal/errcode"
)

func TestResolveShellTable(t *testing.T) {
	installed := func(names ...string) func(string) (string, error) {
		return func(n string) (string, error) {
			for _, m := range names {
				if m == n {
					return "/bin/" + n, nil
				}
			}
			return "", errors.New("not found")
		}
	}
	all := installed("sh", "bash", "zsh", "cmd", "powershell", "pwsh")
	tests := []struct {
		goos, name string
		look       func(string) (string, error)
		want       string // resolved name, or an error code
	}{
		{"linux", "auto", all, "bash"},
		{"linux", "", installed("sh"), "sh"},
		{"linux", "auto", installed(), string(ShellNotAvailable)},
		{"darwin", "auto", all, "zsh"},
		{"darwin", "auto", installed("bash", "sh"), string(ShellNotAvailable)},
		{"windows", "auto", all, "cmd"},
		{"linux", "zsh", installed("bash"), string(ShellNotAvailable)},
		{"linux", "cmd", all, string(ShellNotAvailable)},
		{"darwin", "powershell", all, string(ShellNotAvailable)},
		{"linux", "pwsh", all, "pwsh"},
		{"linux", "pwsh", installed("bash"), string(ShellNotAvailable)},
		{"windows", "sh", all, string(ShellNotAvailable)},
		{"windows", "zsh", all, string(ShellNotAvailable)},
		{"windows", "bash", installed("cmd"), string(ShellNotAvailable)},
		{"windows", "bash", all, "bash"},
		{"windows", "powershell", all, "powershell"},
		{"linux", "fish", all, string(errcode.InvalidArgument)},
	}
	for _, tt := range tests {
		sh, err := resolveShell(tt.goos, tt.name, tt.look)
		got := sh.Name
		if err != nil {
			got = string(errcode.CodeOf(err))
		}
		if got != tt.want {
			t.Errorf("%s %q: got %s (%v), want %s", tt.goos, tt.name, got, err, tt.want)
		}
	}
}

// TestShellNotInstalled: a real missing shell is refused, never replaced.
func TestShellNotInstalled(t *testing.T) {
	missing := "zsh"
	if runtime.GOOS == "windows" {
		missing = "pwsh"
	}
	if _, err := ResolveShell(missing); err == nil {
		t.Skipf("%s is installed", missing)
	}
	p, err := Start(Spec{Command: "echo hi", Shell: missing, Dir: t.TempDir()}, nil, nil)
	if p != nil {
		p.Kill()
	}
	if errcode.CodeOf(err) != ShellNotAvailable {
		t.Errorf("Start with %s: %v, want %s", missing, err, ShellNotAvailable)
	}
}
