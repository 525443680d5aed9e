package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/hostlink/hostlink/internal/apitype"
	"github.com/hostlink/hostlink/internal/approvals"
	"github.com/hostlink/hostlink/internal/daemon"
	"github.com/hostlink/hostlink/internal/textsafe"
)

type approvalsCmd struct {
	List    approvalsListCmd `cmd:"" default:"withargs" help:"List pending approvals (--all: decided and expired ones too)."`
	Show    approvalsShowCmd `cmd:"" help:"Show one approval: the exact action it covers."`
	Approve approveCmd       `cmd:"" help:"Approve a pending approval: the identical request then runs once."`
	Deny    denyCmd          `cmd:"" help:"Deny a pending approval."`
}

type approvalsListCmd struct {
	All  bool `help:"Include decided, used and expired approvals."`
	JSON bool `help:"Print JSON, for scripts."`
}

func (c *approvalsListCmd) Run(ctx context.Context) error {
	params, _ := json.Marshal(apitype.ApprovalsListArgs{All: c.All})
	res, err := daemonCall(ctx, apitype.MethodApprovalsList, params)
	if err != nil {
		return err
	}
	if c.JSON {
		return printIndented(res)
	}
	var list []approvals.Approval
	if err := json.Unmarshal(res, &list); err != nil {
		return fmt.Errorf("malformed response: %w", err)
	}
	printApprovalList(os.Stdout, list)
	return nil
}

// printApprovalList prints one line per approval. Everything the daemon
// sent is shown through textsafe: an action's summary is the agent's text.
func printApprovalList(w io.Writer, list []approvals.Approval) {
	if len(list) == 0 {
		fmt.Fprintln(w, "no pending approvals")
		return
	}
	for _, a := range list {
		fmt.Fprintf(w, "%s  %-8s %-9s %s\n", textsafe.Line(a.ID), textsafe.Line(string(a.State)), until(a), textsafe.Line(a.Action.Summary))
	}
}

// until says how long a pending approval has left.
func until(a approvals.Approval) string {
	if a.State != approvals.Pending {
		return ""
	}
	return time.Until(a.Deadline).Round(time.Second).String()
}

type approvalsShowCmd struct {
	ID   string `arg:"" help:"Approval id (apr_…)."`
	JSON bool   `help:"Print JSON, for scripts."`
}

func (c *approvalsShowCmd) Run(ctx context.Context) error {
	params, _ := json.Marshal(apitype.ApprovalArgs{ID: c.ID})
	res, err := daemonCall(ctx, apitype.MethodApprovalsShow, params)
	if err != nil {
		return err
	}
	if c.JSON {
		return printIndented(res)
	}
	var a approvals.Approval
	if err := json.Unmarshal(res, &a); err != nil {
		return fmt.Errorf("malformed response: %w", err)
	}
	printApproval(os.Stdout, a)
	return nil
}

// printApproval shows one approval in full. Field values keep their line
// breaks (a file preview, a multi-line command), indented; every other
// character a terminal would act on is shown escaped.
func printApproval(w io.Writer, a approvals.Approval) {
	fmt.Fprintf(w, "%s  %s\n", textsafe.Line(a.ID), textsafe.Line(string(a.State)))
	fmt.Fprintf(w, "  %s\n", textsafe.Line(a.Action.Summary))
	for _, f := range a.Action.Fields {
		v := strings.ReplaceAll(textsafe.Block(f.Value), "\n", "\n      ")
		fmt.Fprintf(w, "  %-18s %s\n", textsafe.Line(f.Label)+":", v)
	}
	fmt.Fprintf(w, "  %-18s %s\n", "Requested:", a.Created.Local().Format(time.RFC3339))
	fmt.Fprintf(w, "  %-18s %s\n", "Deadline:", a.Deadline.Local().Format(time.RFC3339))
	if a.DecidedBy != "" {
		fmt.Fprintf(w, "  %-18s %s via %s at %s\n", "Decided by:", textsafe.Line(a.DecidedBy), textsafe.Line(string(a.DecidedVia)), a.Decided.Local().Format(time.RFC3339))
	}
	fmt.Fprintf(w, "  %-18s %s\n", "Action SHA-256:", textsafe.Line(a.Action.SHA256))
}

type approveCmd struct {
	ID   string `arg:"" help:"Approval id (apr_…)."`
	JSON bool   `help:"Print JSON, for scripts."`
}

func (c *approveCmd) Run(ctx context.Context) error { return decide(ctx, c.ID, "approve", c.JSON) }

type denyCmd struct {
	ID   string `arg:"" help:"Approval id (apr_…)."`
	JSON bool   `help:"Print JSON, for scripts."`
}

func (c *denyCmd) Run(ctx context.Context) error { return decide(ctx, c.ID, "deny", c.JSON) }

func decide(ctx context.Context, id, decision string, asJSON bool) error {
	params, _ := json.Marshal(apitype.DecideArgs{ID: id, Decision: decision})
	res, err := daemonCall(ctx, apitype.MethodApprovalsDecide, params)
	if err != nil {
		return err
	}
	if asJSON {
		return printIndented(res)
	}
	var a approvals.Approval
	if err := json.Unmarshal(res, &a); err != nil {
		return fmt.Errorf("malformed response: %w", err)
	}
	fmt.Printf("%s %s: %s\n", textsafe.Line(a.ID), textsafe.Line(string(a.State)), textsafe.Line(a.Action.Summary))
	return nil
}

type reloadCmd struct {
	JSON bool `help:"Print JSON, for scripts."`
}

func (c *reloadCmd) Run(ctx context.Context) error {
	res, err := daemonCall(ctx, apitype.MethodReload, nil)
	if err != nil {
		return err
	}
	if c.JSON {
		return printIndented(res)
	}
	var r apitype.ReloadResult
	if err := json.Unmarshal(res, &r); err != nil {
		return fmt.Errorf("malformed response: %w", err)
	}
	modes, _ := r.Policy["modes"].(map[string]any)
	var parts []string
	for k, v := range modes {
		parts = append(parts, fmt.Sprintf("%s=%v", k, v))
	}
	slices.Sort(parts)
	fmt.Printf("policy reloaded from %s: %s\n", textsafe.Line(r.Config), textsafe.Line(strings.Join(parts, " ")))
	return nil
}

// reloadOnHangup reloads the policy on SIGHUP until the returned stop is
// called. (Windows has no SIGHUP to send: use `hostlink reload`.)
func reloadOnHangup(d *daemon.Daemon) (stop func()) {
	ch := make(chan os.Signal, 1)
	signal.Notify(ch, syscall.SIGHUP)
	done := make(chan struct{})
	go func() {
		for {
			select {
			case <-ch:
				if _, err := d.Reload("signal SIGHUP"); err != nil {
					fmt.Fprintln(os.Stderr, "hostlink: reload:", err)
				}
			case <-done:
				return
			}
		}
	}()
	return func() { signal.Stop(ch); close(done) }
}
