package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"text/tabwriter"
	"time"

	"github.com/hostlink/hostlink/internal/apitype"
	"github.com/hostlink/hostlink/internal/sandbox"
	"github.com/hostlink/hostlink/internal/textsafe"
)

type statusCmd struct {
	JSON bool `help:"Print JSON, for scripts."`
}

func (s *statusCmd) Run(ctx context.Context) error {
	res, err := daemonCall(ctx, apitype.MethodStatus, nil)
	if err != nil {
		return err
	}
	if s.JSON {
		return printIndented(res)
	}
	var st apitype.Status
	if err := json.Unmarshal(res, &st); err != nil {
		return fmt.Errorf("malformed status: %w", err)
	}
	printStatus(os.Stdout, st)
	return nil
}

// printStatus shows the daemon's status, each section's names in one
// column (tabwriter) however wide they are. Commands, task titles, session
// roots and companion names come from agents and peers: every string is
// shown through textsafe, which also escapes the tabs that would split a
// column.
func printStatus(out io.Writer, st apitype.Status) {
	w := tabwriter.NewWriter(out, 0, 0, 2, ' ', 0)
	defer w.Flush()
	safe := textsafe.Line
	up := (time.Duration(st.UptimeSeconds) * time.Second).String()
	fmt.Fprintf(w, "hostlink %s running, pid %d, up %s (since %s)\n", safe(st.Version), st.PID, up, st.Started.Format(time.RFC3339))
	if st.Build.Version != "" {
		fmt.Fprintf(w, "build: %s\n", safe(st.Build.Summary()))
	}
	if u := st.Update; u != nil {
		fmt.Fprintf(w, "update: %s\n", safe(updateLine(u)))
	}
	fmt.Fprintln(w, "transports:")
	for _, t := range st.Transports {
		fmt.Fprintf(w, "  %s\t%s\n", safe(string(t.Name)), safe(t.Address))
	}
	link := st.Link.State
	if st.Link.Reason != "" {
		link += " (" + st.Link.Reason + ")"
	}
	fmt.Fprintf(w, "link: %s\n", safe(link))
	if d := st.Link.Detail; d != nil {
		fmt.Fprintf(w, "  platform\t%s\n", safe(d.URL))
		for _, s := range d.Sessions {
			state := "inactive"
			if s.Active && s.Connection != nil {
				state = s.Connection.State
			}
			fmt.Fprintf(w, "  session\t%s %s (revision %d, %s)\n", safe(s.SessionID), safe(s.AllowedRoot), s.Revision, safe(state))
		}
	}
	fmt.Fprintln(w, "capabilities:")
	for _, c := range st.Capabilities {
		state := "ready"
		switch {
		case !c.Ready && c.Reason != "":
			state = c.Reason
		case !c.Ready:
			state = "not ready"
		}
		fmt.Fprintf(w, "  %s\t%s\n", safe(c.Name), safe(state))
	}
	if sb := st.Sandbox; sb != nil {
		line := "commands run " + sb.String()
		if sb.Mode == sandbox.Failed {
			line = sb.String()
		}
		fmt.Fprintf(w, "  %s\t%s\n", "sandbox", safe(line))
	}
	fmt.Fprintln(w, "workdirs:")
	for _, wd := range st.Workdirs {
		mode := "read-write"
		if wd.ReadOnly {
			mode = "read-only"
		}
		fmt.Fprintf(w, "  %s\t%s (%s)\n", safe(wd.Alias), safe(wd.Path), mode)
	}
	if c := st.Companion; c != nil {
		where := "listening on " + c.Listen
		if c.Listen == "" {
			where = "not listening"
		}
		fmt.Fprintf(w, "companions: %s, %s connected\n", safe(where), countOrNone(len(c.Connected)))
		for _, s := range c.Connected {
			fmt.Fprintf(w, "  %s\t%s (%s, %s, protocol %d, since %s)\n", safe(s.ID), safe(s.Name), safe(s.Route), safe(s.OS), s.Version, safe(s.Connected))
		}
		if h := c.Helper; h != nil && !h.Connected {
			fmt.Fprintf(w, "  WSL interop helper %s not connected (started %d times): %s\n", safe(h.Program), h.Starts, safe(h.LastError))
		}
	}
	fmt.Fprintf(w, "running commands: %s\n", countOrNone(len(st.Commands)))
	for _, c := range st.Commands {
		fmt.Fprintf(w, "  %s\t%s (since %s)\n", safe(c.ID), safe(c.Command), c.Started.Format(time.RFC3339))
	}
	fmt.Fprintf(w, "running tasks: %s\n", countOrNone(len(st.Tasks)))
	for _, t := range st.Tasks {
		fmt.Fprintf(w, "  %s\t%s (since %s)\n", safe(t.ID), safe(t.Title), t.Started.Format(time.RFC3339))
	}
}

func countOrNone(n int) string {
	if n == 0 {
		return "none"
	}
	return fmt.Sprint(n)
}

// updateLine is the update check's result on one line.
func updateLine(u *apitype.UpdateStatus) string {
	switch {
	case u.Available:
		return fmt.Sprintf("hostlink %s is available (this is %s); to install it: %s", u.Latest, u.Current, u.Command)
	case u.CheckedAt == nil:
		return "checking " + u.URL
	case u.Error != "":
		return fmt.Sprintf("the last check (%s) failed: %s", u.CheckedAt.Format(time.RFC3339), u.Error)
	}
	return fmt.Sprintf("up to date (latest release %s, checked %s)", u.Latest, u.CheckedAt.Format(time.RFC3339))
}
