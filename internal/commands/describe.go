package commands

import (
	"cmp"
	"fmt"

	"github.com/hostlink/hostlink/internal/commandapi"
	"github.com/hostlink/hostlink/internal/policy"
	"github.com/hostlink/hostlink/internal/textsafe"
)

// describeRun describes run_command and start_command: the command line
// with its directory and environment names (never values), as an
// approval shows it and allow_commands matches it.
func (*Service) describeRun(a commandapi.RunArgs, dc policy.DescribeContext) (policy.Action, error) {
	var act policy.Action
	dir := a.Cwd
	if dir == "" {
		dir = "."
	}
	loc, ok, err := dc.Locate(a.Workdir, dir)
	if err != nil {
		return act, err
	}
	if ok {
		dir = act.Touch(loc)
		if real, ok := loc.Resolved(); ok {
			dir += " (links resolved: " + real + ")"
		}
		// The directory it runs in is bound: an approved command runs in
		// the directory shown, never in one moved or linked into its place.
		if ext, ok, err := dc.MeasureDir(a.Workdir, a.Cwd); ok && err == nil {
			act.Bind("cwd", ext)
		}
	}
	act.CommandLine = policy.CommandLine(a.Command, a.Argv)
	act.HasEnv = len(a.Env) > 0
	if a.Command == "" {
		act.Argv = a.Argv
	}
	act.Add("Command", act.CommandLine)
	if a.Command != "" {
		act.Add("Shell", cmp.Or(a.Shell, "auto"))
	}
	act.Add("Directory", dir)
	act.Add("Environment names", policy.EnvNames(a.Env))
	if a.Stdin != nil {
		act.Add("Stdin", fmt.Sprintf("%d bytes: %s", len(*a.Stdin), policy.Preview([]byte(*a.Stdin), 512)))
	}
	switch d := dc.CommandTimeout(); {
	case a.TimeoutSeconds > 0:
		act.Add("Timeout", fmt.Sprintf("%gs", a.TimeoutSeconds))
	case d > 0:
		act.Add("Timeout", fmt.Sprintf("%gs (the configured default)", d.Seconds()))
	}
	act.Summary = fmt.Sprintf("%s: %s (in %s)", dc.Op, textsafe.Clip(act.CommandLine, 200), dir)
	// A command the configured sandbox would confine, where it cannot be
	// set up, is refused before anyone is asked: it would not run.
	failed := dc.CommandSandboxFailed()
	if failed != nil && a.Sandbox != "off" {
		return act, failed
	}
	// Asking for less than the sandbox is its own class, which no allow
	// rule covers.
	switch a.Sandbox {
	case "", "default":
	case "network":
		act.Class, act.NoRule = policy.CommandsUnsandboxed, true
		act.Add("Sandbox", "LOWERED: confined to the workdir, but WITH NETWORK ACCESS")
		act.Summary += " [sandbox lowered: network]"
	default:
		act.Class, act.NoRule = policy.CommandsUnsandboxed, true
		off := "OFF: runs UNSANDBOXED, with all of your permissions (it can read hostlink's token and your credentials)"
		if failed != nil {
			off += ". THE SANDBOX CANNOT BE SET UP ON THIS COMPUTER, so every command that asks for it is refused; this one asks to run without it"
		}
		act.Add("Sandbox", off)
		act.Summary += " [unsandboxed]"
	}
	return act, nil
}
