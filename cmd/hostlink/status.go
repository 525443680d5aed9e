package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/hostlink/hostlink/internal/daemon"
)

type statusCmd struct {
	JSON bool `help:"Print JSON, for scripts."`
}

func (s *statusCmd) Run(ctx context.Context) error {
	res, err := daemonCall(ctx, "status", nil)
	if err != nil {
		return err
	}
	if s.JSON {
		return printIndented(res)
	}
	var st daemon.Status
	if err := json.Unmarshal(res, &st); err != nil {
		return fmt.Errorf("malformed status: %w", err)
	}
	printStatus(os.Stdout, st)
	return nil
}

func printStatus(w io.Writer, st daemon.Status) {
	up := (time.Duration(st.UptimeSeconds) * time.Second).String()
	fmt.Fprintf(w, "hostlink %s running, pid %d, up %s (since %s)\n", st.Version, st.PID, up, st.Started.Format(time.RFC3339))
	if st.Build.Version != "" {
		fmt.Fprintf(w, "build: %s\n", st.Build.Summary())
	}
	fmt.Fprintln(w, "transports:")
	for _, t := range st.Transports {
		fmt.Fprintf(w, "  %-10s %s\n", t.Name, t.Address)
	}
	link := st.Link.State
	if st.Link.Reason != "" {
		link += " (" + st.Link.Reason + ")"
	}
	fmt.Fprintf(w, "link: %s\n", link)
	if d := st.Link.Detail; d != nil {
		fmt.Fprintf(w, "  platform   %s\n", d.URL)
		for _, s := range d.Sessions {
			state := "inactive"
			if s.Active && s.Connection != nil {
				state = s.Connection.State
			}
			fmt.Fprintf(w, "  session    %s %s (revision %d, %s)\n", s.SessionID, s.AllowedRoot, s.Revision, state)
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
		fmt.Fprintf(w, "  %-10s %s\n", c.Name, state)
	}
	if st.Sandbox != nil {
		fmt.Fprintf(w, "  %-10s commands run %s\n", "sandbox", st.Sandbox)
	}
	fmt.Fprintln(w, "workdirs:")
	for _, wd := range st.Workdirs {
		mode := "read-write"
		if wd.ReadOnly {
			mode = "read-only"
		}
		fmt.Fprintf(w, "  %-10s %s (%s)\n", wd.Alias, wd.Path, mode)
	}
	if c := st.Companion; c != nil {
		where := "listening on " + c.Listen
		if c.Listen == "" {
			where = "not listening"
		}
		fmt.Fprintf(w, "companions: %s, %s connected\n", where, countOrNone(len(c.Connected)))
		for _, s := range c.Connected {
			fmt.Fprintf(w, "  %-10s %s (%s, %s, protocol %d, since %s)\n", s.ID, s.Name, s.Route, s.OS, s.Version, s.Connected)
		}
		if h := c.Helper; h != nil && !h.Connected {
			fmt.Fprintf(w, "  WSL interop helper %s not connected (started %d times): %s\n", h.Program, h.Starts, h.LastError)
		}
	}
	fmt.Fprintf(w, "running commands: %s\n", countOrNone(len(st.Commands)))
	for _, c := range st.Commands {
		fmt.Fprintf(w, "  %s  %s (since %s)\n", c.ID, c.Command, c.Started.Format(time.RFC3339))
	}
	fmt.Fprintf(w, "running tasks: %s\n", countOrNone(len(st.Tasks)))
	for _, t := range st.Tasks {
		fmt.Fprintf(w, "  %s  %s (since %s)\n", t.ID, t.Title, t.Started.Format(time.RFC3339))
	}
}

func countOrNone(n int) string {
	if n == 0 {
		return "none"
	}
	return fmt.Sprint(n)
}
