package main

import (
	"context"
	"fmt"
	"os"

	"github.com/hostlink/hostlink/internal/config"
	"github.com/hostlink/hostlink/internal/daemon"
	"github.com/hostlink/hostlink/internal/hostinfo"
	"github.com/hostlink/hostlink/internal/paths"
)

type infoCmd struct {
	JSON bool `help:"Print JSON."`
}

func (i *infoCmd) Run() error {
	info, err := hostinfo.Collect()
	if err != nil {
		return err
	}
	dirs, err := paths.Resolve()
	if err != nil {
		return err
	}
	if i.JSON {
		return printJSON(struct {
			hostinfo.Info
			Dirs paths.Dirs `json:"dirs"`
		}{info, dirs})
	}
	fmt.Printf("hostlink   %s (%s)\n", info.Version, info.GoVersion)
	fmt.Printf("platform   %s\narch       %s\nmachine id %s\nhostname   %s\n", info.Platform, info.Arch, info.MachineID, info.Hostname)
	if info.OSVersion != "" {
		fmt.Printf("os         %s\n", info.OSVersion)
	}
	fmt.Printf("config     %s\nstate      %s\nlogs       %s\naudit log  %s\nworkspace  %s\n",
		dirs.ConfigFile(), dirs.State, dirs.Logs, dirs.AuditFile(), dirs.Workspace)
	return nil
}

type tokenCmd struct {
	Create bool `help:"Make a token even where no daemon has run yet (a state directory with no token and no daemon on it)."`
}

// Run prints the token on stdout, for $(hostlink token), and on stderr
// which instance it belongs to: a token from another environment than the
// daemon's is the usual reason the console refuses one.
func (tc *tokenCmd) Run(ctx context.Context) error {
	dirs, err := paths.Resolve()
	if err != nil {
		return err
	}
	tok, err := daemon.InstanceToken(ctx, dirs, tc.Create)
	if err != nil {
		return err
	}
	fmt.Println(tok)
	fmt.Fprintf(os.Stderr, "(the token of the hostlink whose state directory is %s)\n", dirs.State)
	return nil
}

type defaultsCmd struct{}

// Run prints the built-in defaults.toml: what a release user has in place
// of the source tree's internal/config/defaults.toml.
func (defaultsCmd) Run() error {
	_, err := fmt.Print(config.DefaultTOML())
	return err
}
