package main

import (
	"fmt"

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

type tokenCmd struct{}

func (tokenCmd) Run() error {
	dirs, err := paths.Resolve()
	if err != nil {
		return err
	}
	tok, err := daemon.Token(dirs)
	if err != nil {
		return err
	}
	fmt.Println(tok)
	return nil
}
