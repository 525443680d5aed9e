package main

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/daemon"
	"github.com/hostlink/hostlink/internal/ipc"
	"github.com/hostlink/hostlink/internal/mcpfront"
	"github.com/hostlink/hostlink/internal/paths"
	"github.com/hostlink/hostlink/internal/procs"
	"github.com/hostlink/hostlink/internal/version"
)

type serveCmd struct {
	AllowedRoot string        `help:"Serve this directory as the workdir 'workspace' instead of the default." type:"path"`
	EnableShell bool          `help:"Allow command execution (run_command and friends), as commands.enabled does. Commands run in the sandbox ([commands] sandbox, default \"${default_sandbox}\": they write only in their workdir and TMPDIR, read none of hostlink's files or your credential stores, have no network); hostlink status says what this OS enforces."`
	Listen      string        `help:"Loopback address for Streamable HTTP (default from config: 127.0.0.1:7717)."`
	IdleExit    time.Duration `help:"Stop after this long with no client (what hostlink mcp starts a daemon with); 0, the default, never stops."`
	ReadyStdout bool          `hidden:"" help:"Write one line on stdout once serving, then nothing more (for hostlink mcp's auto-start)."`
	linkFlags
}

func (s *serveCmd) Run(ctx context.Context, c *cli) error {
	tuneGC(os.Getenv)
	mode := daemon.ModeServe
	if s.ReadyStdout {
		mode = daemon.ModeAutoStarted // only hostlink mcp asks for the ready line
	}
	d, err := daemon.Open(daemon.Options{ConfigPath: c.Config, AllowedRoot: s.AllowedRoot, Listen: s.Listen, EnableShell: s.EnableShell, IdleExit: s.IdleExit, Mode: mode, Runtimes: testRuntimes()})
	if err != nil {
		return err
	}
	// Close ends the commands the daemon ran; KillAll then ends anything
	// else procs started, so nothing outlives hostlink.
	defer procs.KillAll()
	defer d.Close()
	if err := d.CheckConsent(ctx); err != nil {
		return err
	}
	defer reloadOnHangup(d)()
	if lo := s.linkOptions(d); lo.URL != "" {
		lctx, stop := context.WithCancel(ctx)
		wait, err := d.StartLink(lctx, lo)
		if err != nil {
			stop()
			return err
		}
		defer wait()
		defer stop()
	}
	if d.Config.Mesh.Enabled {
		stopMesh, err := d.StartMesh(ctx)
		if err != nil {
			return err
		}
		defer stopMesh()
	}
	var console string
	return d.ServeHTTP(ctx, func(addr net.Addr) {
		fmt.Fprintf(os.Stderr, "hostlink %s serving MCP at http://%s/mcp\n", d.Info.Version, addr)
		for _, wd := range d.Files.Workdirs() {
			mode := "read-write"
			if wd.Root.ReadOnly() {
				mode = "read-only"
			}
			fmt.Fprintf(os.Stderr, "  workdir %-12s %s (%s)\n", wd.Alias, wd.Root.Dir(), mode)
		}
		fmt.Fprintf(os.Stderr, "  bearer token: `hostlink token`; audit log: %s\n", d.Audit.Path())
		if lo := s.linkOptions(d); lo.URL != "" {
			fmt.Fprintf(os.Stderr, "  platform link: %s (`hostlink status` shows it)\n", lo.URL)
		}
		for _, t := range d.Transports() {
			if t.Name == audit.IPC {
				fmt.Fprintf(os.Stderr, "  control channel: %s (`hostlink status`, `hostlink call`)\n", t.Address)
			}
			if t.Name == audit.Mesh {
				fmt.Fprintf(os.Stderr, "  mesh: %s\n", t.Address)
			}
			if t.Name == audit.Console {
				fmt.Fprintf(os.Stderr, "  web console: %s (approvals, activity, audit; `hostlink console` opens it logged in)\n", t.Address)
				console = t.Address
			}
		}
		if s.ReadyStdout {
			readyOnStdout(console)
		}
	})
}

// readyOnStdout tells the `hostlink mcp` that started this daemon that it
// serves, then points stdout elsewhere: the front end stops reading it.
// That front end may be gone already (its client answered from the
// catalogue and left): the daemon serves on, so the line is written with
// SIGPIPE caught, which turns a write to the closed pipe into an error
// instead of the end of the process. (Caught, not ignored: an ignored
// SIGPIPE would be inherited by every command the daemon runs.)
func readyOnStdout(console string) {
	pipe := make(chan os.Signal, 1)
	signal.Notify(pipe, syscall.SIGPIPE)
	fmt.Fprintf(os.Stdout, "%s%s\n", mcpfront.ReadyPrefix, console)
	signal.Stop(pipe)
	null, err := os.OpenFile(os.DevNull, os.O_WRONLY, 0)
	if err != nil {
		return
	}
	os.Stdout.Close()
	os.Stdout = null
}

type mcpCmd struct {
	AllowedRoot string `help:"For a daemon hostlink mcp starts: serve this directory as the workdir 'workspace' instead of the default." type:"path"`
	EnableShell bool   `help:"For a daemon hostlink mcp starts: allow command execution, as commands.enabled does."`
	NoStart     bool   `help:"Fail when no daemon is running instead of starting one in the background."`
}

// Run serves the stdio client through the running daemon, starting one
// (stopping itself when idle) when none runs.
func (m *mcpCmd) Run(ctx context.Context, c *cli) error {
	dirs, err := paths.Resolve()
	if err != nil {
		return err
	}
	addr, err := ipc.Address(dirs.Runtime)
	if err != nil {
		return err
	}
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	var args, flags []string
	if c.Config != "" {
		args = append(args, "--config", c.Config)
	}
	args = append(args, "serve", "--ready-stdout", "--idle-exit", daemon.DefaultIdleExit.String())
	if m.AllowedRoot != "" {
		args = append(args, "--allowed-root", m.AllowedRoot)
		flags = append(flags, "--allowed-root")
	}
	if m.EnableShell {
		args = append(args, "--enable-shell")
		flags = append(flags, "--enable-shell")
	}
	configFile := c.Config
	if configFile == "" {
		configFile = dirs.ConfigFile()
	}
	// What else a started daemon's tools depend on: the desktop it finds
	// and the programs (agent CLIs) on its PATH.
	var env []string
	for _, k := range []string{"DISPLAY", "WAYLAND_DISPLAY", "XDG_SESSION_TYPE", "PATH"} {
		env = append(env, k+"="+os.Getenv(k))
	}
	return mcpfront.Run(ctx, mcpfront.Options{
		Addr:         addr,
		NoStart:      m.NoStart,
		StartFlags:   flags,
		Stderr:       os.Stderr,
		Catalogue:    filepath.Join(dirs.State, "mcp-catalogue.json"),
		CatalogueKey: mcpfront.CatalogueKey(version.Get().Long(), exe, args, configFile, env),
		Start: mcpfront.Start{
			Executable: exe, Args: args, IdleExit: daemon.DefaultIdleExit,
			Output:  filepath.Join(dirs.Logs, "autostarted-daemon.out"),
			Timeout: time.Minute,
		},
	}, os.Stdin, os.Stdout)
}
