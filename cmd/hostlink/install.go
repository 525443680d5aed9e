package main

import (
	"fmt"
	"os"
	"path/filepath"

	"github.com/hostlink/hostlink/internal/autostart"
	"github.com/hostlink/hostlink/internal/paths"
)

type installCmd struct {
	Platform string `help:"Platform link URL the daemon connects to (passed to serve --platform)."`
	JSON     bool   `help:"Print JSON, for scripts."`
}

// autostartSpec is the unit for this user, running serve with the global
// --config and the given extra arguments.
func autostartSpec(c *cli, extra ...string) (*autostart.Spec, error) {
	dirs, err := paths.Resolve()
	if err != nil {
		return nil, err
	}
	var args []string
	if c.Config != "" {
		abs, err := filepath.Abs(c.Config)
		if err != nil {
			return nil, err
		}
		args = append(args, "--config", abs)
	}
	return autostart.ForThisUser(dirs, append(args, extra...))
}

// Run writes the unit and prints the commands that register it; it never
// runs them.
func (i *installCmd) Run(c *cli) error {
	var extra []string
	if i.Platform != "" {
		extra = append(extra, "--platform", i.Platform)
	}
	s, err := autostartSpec(c, extra...)
	if err != nil {
		return err
	}
	if err := autostart.CheckLasting(s.Exe, autostart.GoCache(), os.TempDir()); err != nil {
		return err
	}
	res, err := autostart.Install(s)
	if err != nil {
		return err
	}
	if i.JSON {
		return printJSON(res)
	}
	if res.Changed {
		fmt.Printf("Wrote %s\n", res.Path)
	} else {
		fmt.Printf("%s is already up to date\n", res.Path)
	}
	fmt.Print("\nTo start hostlink now and at every login, run:\n\n")
	for _, cmd := range res.Commands {
		fmt.Println("  " + cmd)
	}
	for _, h := range res.Hints {
		fmt.Println("\nNote: " + h)
	}
	return nil
}

type uninstallCmd struct {
	JSON bool `help:"Print JSON, for scripts."`
}

// Run removes the unit and prints the commands that unregister it.
func (u *uninstallCmd) Run(c *cli) error {
	s, err := autostartSpec(c)
	if err != nil {
		return err
	}
	res, err := autostart.Uninstall(s)
	if err != nil {
		return err
	}
	if u.JSON {
		return printJSON(res)
	}
	switch {
	case res.Kept:
		fmt.Printf("%s stays until the commands below, which need it, have stopped and disabled hostlink.\n", res.Path)
		fmt.Print("\nTo stop, disable and remove it, run in this order:\n\n")
	case res.Changed:
		fmt.Printf("Removed %s\n", res.Path)
		fmt.Print("\nTo stop and unregister a running hostlink, run:\n\n")
	case len(res.Commands) > 0:
		fmt.Printf("Nothing installed at %s\n", res.Path)
		fmt.Print("\nTo stop and unregister a hostlink registered earlier, run:\n\n")
	default:
		fmt.Printf("Nothing installed at %s\n", res.Path)
	}
	for _, cmd := range res.Commands {
		fmt.Println("  " + cmd)
	}
	return nil
}
