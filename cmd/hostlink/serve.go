package main

import (
	"context"
	"fmt"
	"net"
	"os"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/daemon"
	"github.com/hostlink/hostlink/internal/procs"
)

type serveCmd struct {
	AllowedRoot string `help:"Serve this directory as the workdir 'workspace' instead of the default." type:"path"`
	EnableShell bool   `help:"Allow command execution (run_command and friends), as commands.enabled does. Commands run with your permissions."`
	Listen      string `help:"Loopback address for Streamable HTTP (default from config: 127.0.0.1:7717)."`
	linkFlags
}

func (s *serveCmd) Run(ctx context.Context, c *cli) error {
	d, err := daemon.Open(daemon.Options{ConfigPath: c.Config, AllowedRoot: s.AllowedRoot, Listen: s.Listen, EnableShell: s.EnableShell, Runtimes: testRuntimes()})
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
		for _, t := range d.Status().Transports {
			if t.Name == audit.IPC {
				fmt.Fprintf(os.Stderr, "  control channel: %s (`hostlink status`, `hostlink call`)\n", t.Address)
			}
			if t.Name == audit.Console {
				fmt.Fprintf(os.Stderr, "  web console: %s (approvals, activity, audit; log in with the token)\n", t.Address)
			}
		}
	})
}

type mcpCmd struct {
	AllowedRoot string `help:"Serve this directory as the workdir 'workspace' instead of the default." type:"path"`
	EnableShell bool   `help:"Allow command execution (run_command and friends), as commands.enabled does. Commands run with your permissions."`
}

func (m *mcpCmd) Run(ctx context.Context, c *cli) error {
	d, err := daemon.Open(daemon.Options{ConfigPath: c.Config, AllowedRoot: m.AllowedRoot, EnableShell: m.EnableShell, Runtimes: testRuntimes()})
	if err != nil {
		return err
	}
	defer procs.KillAll()
	defer d.Close()
	return d.ServeStdio(ctx)
}
