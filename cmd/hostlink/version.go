package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/alecthomas/kong"

	"github.com/hostlink/hostlink/internal/completion"
	"github.com/hostlink/hostlink/internal/manpage"
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
	Shell string `arg:"" enum:"bash,zsh,fish,powershell" help:"The shell: bash, zsh, fish or powershell."`
}

// Run writes the completion script, generated from this command line's
// own definition.
func (c completionCmd) Run(k *kong.Kong) error {
	return completion.Write(os.Stdout, c.Shell, "hostlink", k.Model)
}

type manpageCmd struct{}

// Run writes hostlink(1) in roff, generated from this command line's own
// definition (the release packs it; packaging/generate.sh).
func (manpageCmd) Run(k *kong.Kong) error {
	info := version.Get()
	date, _, _ := strings.Cut(info.Date, "T")
	return manpage.Write(os.Stdout, manpage.Page{
		Name: "hostlink", Version: info.Version, Date: date,
		Summary:     "a local PC executor for AI agents",
		Description: manDescription,
		Sections:    manSections,
	}, k.Model)
}
