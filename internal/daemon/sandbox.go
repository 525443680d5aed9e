package daemon

import (
	"os"
	"runtime"

	"github.com/hostlink/hostlink/internal/config"
	"github.com/hostlink/hostlink/internal/paths"
	"github.com/hostlink/hostlink/internal/sandbox"
)

// SandboxPolicy is the confinement of every command a hostlink with dirs
// and cfg (read from configFile) runs, from [commands]: hostlink's own
// directories, its configuration file and the platform's token file are
// always hidden, its program, autostart unit and completions always
// read-only; the hidden list defaults to the usual credential stores. The
// caller sets Workdir per command.
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
	}
}

func (d *Daemon) sandboxPolicy() sandbox.Policy { return SandboxPolicy(d.Dirs, d.Config, d.configFile) }

// SandboxStatus is the confinement commands get here, as measured.
func (d *Daemon) SandboxStatus() sandbox.Status {
	return sandbox.Effective(sandbox.Mode(d.Config.Commands.Sandbox))
}

// sandboxDescription is SandboxStatus in words, for list_workdirs.
func (d *Daemon) sandboxDescription() string {
	s := d.SandboxStatus().String()
	if d.Config.Commands.Network == "on" {
		s += "; network allowed"
	}
	return s
}
