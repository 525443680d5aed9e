// Command hostlink is a local PC executor: it lets AI agents work with files
// inside configured workdirs on this computer, safely and audibly, over MCP.
//
// This file only wires the command line; everything else lives in
// internal packages.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/alecthomas/kong"

	"github.com/hostlink/hostlink/internal/config"
	"github.com/hostlink/hostlink/internal/fds"
	"github.com/hostlink/hostlink/internal/textsafe"
	"github.com/hostlink/hostlink/internal/version"
)

type cli struct {
	Config string `help:"Configuration file (default: the per-OS config path; optional there)." type:"path"`

	Serve       serveCmd       `cmd:"" help:"Run the daemon: MCP over Streamable HTTP on loopback, with a bearer token."`
	MCP         mcpCmd         `cmd:"" name:"mcp" help:"Serve MCP on stdin/stdout, for a local MCP client that starts hostlink."`
	Info        infoCmd        `cmd:"" help:"Show host facts: platform, arch, machine ID and directories."`
	Defaults    defaultsCmd    `cmd:"" help:"Print a config.toml that documents every key and sets each to its default."`
	Status      statusCmd      `cmd:"" help:"Show the running daemon: version, uptime, endpoints, capabilities, workdirs, running work."`
	Call        callCmd        `cmd:"" help:"Run one operation on the running daemon: hostlink call OP '{json}'."`
	Token       tokenCmd       `cmd:"" help:"Print the bearer token for the HTTP endpoint, naming its instance (state directory); --create makes one where no daemon has run."`
	Audit       auditCmd       `cmd:"" help:"Inspect the audit log."`
	Approvals   approvalsCmd   `cmd:"" help:"List, show, approve or deny actions waiting for your approval (see [policy])."`
	Console     consoleCmd     `cmd:"" help:"Open the web console in your browser, logged in through a one-time link from the running daemon (--print prints the link)."`
	Logs        logsCmd        `cmd:"" help:"Print the end of hostlink's log (-f follows it; --path prints where it is)."`
	Stop        stopCmd        `cmd:"" help:"Stop the running daemon over the control channel (as the service manager's stop does)."`
	Reload      reloadCmd      `cmd:"" help:"Reload the configuration's [policy] in the running daemon (as SIGHUP does)."`
	Agent       agentCmd       `cmd:"" help:"Manage agent tasks' workdir state."`
	DevPlatform devPlatformCmd `cmd:"" name:"dev-platform" help:"A reference platform on loopback for trying and testing the platform link (not a production platform)."`
	Pair        pairCmd        `cmd:"" help:"Pair with a platform account (OAuth in the browser, or --device); tokens go to the OS keychain."`
	Unpair      unpairCmd      `cmd:"" help:"Revoke every pairing: the platform tokens, the companions paired with this hostlink, and its own pairings as a companion."`
	Install     installCmd     `cmd:"" help:"Write the autostart unit (launchd, systemd user unit, Task Scheduler) and print the command that registers it."`
	Uninstall   uninstallCmd   `cmd:"" help:"Print the commands that stop, disable and remove the autostart unit, removing only what they do not need."`
	Doctor      doctorCmd      `cmd:"" help:"Check the installation: each line OK, WARN or FAIL with a fix; exits 1 on a failure."`
	Hub         hubCmd         `cmd:"" help:"Run and manage a hub: one MCP endpoint for a fleet of hostlink machines, over a NATS bus."`
	Mesh        meshCmd        `cmd:"" help:"Enrol this machine in a hub's mesh and choose which callers it trusts ([mesh] in the config turns it on)."`
	Companion   companionCmd   `cmd:"" help:"Reach this host's desktop and commands from a hostlink in Docker or WSL (the companion), and manage its pairing."`
	Update      updateCmd      `cmd:"" help:"Install the latest release (verified with the hostlink release key) in place of this binary, and restart the daemon."`
	Version     versionCmd     `cmd:"" help:"Print the version, commit, build date, Go version and target."`
	Completion  completionCmd  `cmd:"" help:"Print the shell completion script for bash, zsh, fish or PowerShell."`
	Manpage     manpageCmd     `cmd:"" hidden:"" help:"Print the manual page, hostlink(1), in roff."`

	VersionFlag kong.VersionFlag `name:"version" help:"Print the version and exit."`
}

func main() {
	// Before anything can start a process: descriptors inherited from the
	// launcher must not reach the commands hostlink runs.
	if err := fds.CloseOnExec(); err != nil {
		fmt.Fprintln(os.Stderr, "hostlink: marking inherited descriptors close-on-exec:", err)
		os.Exit(1)
	}
	var c cli
	k, err := parser(&c)
	if err != nil {
		panic(err) // the command line's own definition is wrong
	}
	kctx, err := k.Parse(os.Args[1:])
	k.FatalIfErrorf(err)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	kctx.BindTo(ctx, (*context.Context)(nil))
	if err := kctx.Run(&c); err != nil {
		exitError(err)
	}
}

// parser is the command line's parser, also for its help, completions
// and README's reference (docgen).
func parser(c *cli) (*kong.Kong, error) {
	return kong.New(c,
		kong.Name("hostlink"),
		kong.Description("A local PC executor for AI agents: jailed file operations over MCP, every call audited."),
		kong.UsageOnError(),
		kong.Vars{"version": strings.TrimSuffix(version.Get().Long(), "\n"), "default_sandbox": config.Default().Commands.Sandbox},
	)
}

// printJSON prints v as indented JSON, with the characters a terminal
// would act on or hide escaped (textsafe.JSON): still the same JSON.
func printJSON(v any) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	if err := enc.Encode(v); err != nil {
		return err
	}
	_, err := os.Stdout.Write(textsafe.JSON(b.Bytes()))
	return err
}
