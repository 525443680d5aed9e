package main

import (
	"fmt"
	"os"

	"github.com/alecthomas/kong"

	"github.com/hostlink/hostlink/internal/completion"
	"github.com/hostlink/hostlink/internal/version"
)

type versionCmd struct {
	JSON bool `help:"Print JSON, for scripts."`
}

// Run prints this binary's version, commit, date, Go version and target.
func (v versionCmd) Run() error {
	info := version.Get()
	if v.JSON {
		return printJSON(info)
	}
	fmt.Print(info.Long())
	return nil
}

type completionCmd struct {
	Shell string `arg:"" enum:"bash,zsh,fish" help:"The shell: bash, zsh or fish."`
}

// Run writes the completion script, generated from this command line's
// own definition.
func (c completionCmd) Run(k *kong.Kong) error {
	return completion.Write(os.Stdout, c.Shell, "hostlink", k.Model)
}
