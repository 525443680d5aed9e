package daemon

import (
	"os"
	"path/filepath"
	"runtime"

	"github.com/hostlink/hostlink/internal/config"
	"github.com/hostlink/hostlink/internal/paths"
	"github.com/hostlink/hostlink/internal/sandbox"
)

// SandboxPolicy is the confinement of every command a hostlink with dirs
// and cfg (read from configFile) runs, from [commands]: hostlink's own
// directories, its configuration file and the platform's token file are
// always hidden, its program, autostart unit and completions always
// read-only; the hidden list defaults to the usual credential stores;
// the commands' private temporary directories are kept in the state
// directory, where nobody else can create names (never in a shared /tmp).
// The caller sets Workdir per command.
func SandboxPolicy(dirs paths.Dirs, cfg *config.Config, configFile string) sandbox.Policy {
	cc := cfg.Commands
	hidden := cc.Hidden
	if hidden == nil {
		home, _ := os.UserHomeDir()
		hidden = sandbox.ResolveHidden(sandbox.DefaultHidden(runtime.GOOS), home)
	}
	return sandbox.Policy{
		Mode:      sandbox.Mode(cc.Sandbox),
		Writable:  cc.Writable,
		Hidden:    hidden,
		Protected: protectedPaths(dirs, cfg, configFile),
		Guarded:   ownFiles(dirs),
		Network:   cc.Network == "on",
		TmpRoot:   filepath.Join(dirs.State, "sandbox"),
	}
}

func (d *Daemon) sandboxPolicy() sandbox.Policy { return SandboxPolicy(d.Dirs, d.Config, d.configFile) }

// SandboxStatus is the confinement commands get here, as measured.
func (d *Daemon) SandboxStatus() sandbox.Status {
	return sandbox.Effective(sandbox.Mode(d.Config.Commands.Sandbox))
}

// sandboxFailure is the error a command that would run in the configured
// sandbox gets when it cannot be set up here (SANDBOX_FAILED), nil when
// it can or is configured off: the policy refuses such a command before
// asking anyone.
func (d *Daemon) sandboxFailure() error {
	if st := d.SandboxStatus(); st.Mode == sandbox.Failed {
		return sandbox.FailedError(st)
	}
	return nil
}

// sandboxDescription is SandboxStatus in words, for list_workdirs.
func (d *Daemon) sandboxDescription() string {
	s := d.SandboxStatus().String()
	if d.Config.Commands.Network == "on" {
		s += "; network allowed"
	}
	return s
}
