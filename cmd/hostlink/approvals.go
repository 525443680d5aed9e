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
	"github.com/hostlink/hostlink/internal/approvalsapi"
	"github.com/hostlink/hostlink/internal/daemon"
	"github.com/hostlink/hostlink/internal/textsafe"
)

type approvalsCmd struct {
	List    approvalsListCmd `cmd:"" default:"withargs" help:"List pending approvals (--all: decided and expired ones too)."`
	Show    approvalsShowCmd `cmd:"" help:"Show one approval: the exact action it covers."`
	Approve approveCmd       `cmd:"" help:"Approve pending approvals: the identical request then runs once, and --scope lets more like it run unasked (under confirm_in_person: proposes it, for you to confirm on the desktop)."`
	Deny    denyCmd          `cmd:"" help:"Deny pending approvals."`
	Grants  grantsCmd        `cmd:"" help:"List the grants in force (what each covers and when it ends), then those that ended lately, with when and why."`
	Revoke  revokeCmd        `cmd:"" help:"End a grant now."`
	Save    saveCmd          `cmd:"" help:"Show the TOML that saving a grant to the configuration writes; --apply writes it and reloads."`
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
	var list []approvalsapi.Approval
	if err := json.Unmarshal(res, &list); err != nil {
		return fmt.Errorf("malformed response: %w", err)
	}
	printApprovalList(os.Stdout, list)
	return nil
}

// printApprovalList prints one line per approval. Everything the daemon
// sent is shown through textsafe: an action's summary is the agent's text.
func printApprovalList(w io.Writer, list []approvalsapi.Approval) {
	if len(list) == 0 {
		fmt.Fprintln(w, "no pending approvals")
		return
	}
	for _, a := range list {
		fmt.Fprintf(w, "%s  %-8s %-9s %s\n", textsafe.Line(a.ID), textsafe.Line(string(a.State)), until(a), textsafe.Line(a.Action.Summary))
	}
}

// until says how long a pending approval has left.
func until(a approvalsapi.Approval) string {
	if a.State != approvalsapi.Pending {
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
	var a approvalsapi.Approval
	if err := json.Unmarshal(res, &a); err != nil {
		return fmt.Errorf("malformed response: %w", err)
	}
	printApproval(os.Stdout, a)
	return nil
}

// printApproval shows one approval in full. Field values keep their line
// breaks (a file preview, a multi-line command), indented; every other
// character a terminal would act on is shown escaped.
func printApproval(w io.Writer, a approvalsapi.Approval) {
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
	if a.Grant != "" {
		fmt.Fprintf(w, "  %-18s %s (scope %s)\n", "Grant:", textsafe.Line(a.Grant), textsafe.Line(string(a.Scope)))
	}
	if p := a.Proposal; p != nil {
		fmt.Fprintf(w, "  %-18s by %s via %s at %s: allow %s\n", "Proposed:", textsafe.Line(p.By), textsafe.Line(string(p.Via)),
			p.At.Local().Format(time.RFC3339), textsafe.Line(p.Covers))
	}
	if im := a.Action.Image; im != nil {
		fmt.Fprintf(w, "  %-18s observation %s, %dx%d, %d marks (the console shows it)\n", "Image:", textsafe.Line(im.ObservationID), im.Width, im.Height, len(im.Marks))
	}
	if a.Action.Diff != "" {
		fmt.Fprintf(w, "  Diff:\n")
		for _, l := range strings.SplitAfter(strings.TrimSuffix(a.Action.Diff, "\n"), "\n") {
			fmt.Fprintf(w, "    %s\n", textsafe.Block(strings.TrimSuffix(l, "\n")))
		}
	}
	fmt.Fprintf(w, "  %-18s %s\n", "Action SHA-256:", textsafe.Line(a.Action.SHA256))
}

type approveCmd struct {
	IDs        []string `arg:"" name:"id" help:"Approval ids (apr_…); several are decided in one batch."`
	Scope      string   `enum:"once,session,class,path,command,argv_prefix" default:"once" help:"How far the approval reaches: once; session (this class from the asking client session); class (this class in this workdir, --minutes); path (writes below --path, resolved, not the directory itself); command (this exact command line); argv_prefix (argv starting with --argv-prefix)."`
	Minutes    int      `help:"Scope class: how long the grant lasts."`
	Path       string   `help:"Scope path: the workdir-relative directory writes below it are granted (default: the one holding the target; never the workdir itself: that is --scope class)."`
	ArgvPrefix []string `name:"argv-prefix" sep:"none" help:"Scope argv_prefix: one argument per flag, a prefix of the request's argv (default: all of it)."`
	JSON       bool     `help:"Print JSON, for scripts."`
}

func (c *approveCmd) Run(ctx context.Context) error {
	return decide(ctx, c.IDs, "approve", apitype.DecideScope{Scope: c.Scope, Minutes: c.Minutes, Path: c.Path, ArgvPrefix: c.ArgvPrefix}, c.JSON)
}

type denyCmd struct {
	IDs  []string `arg:"" name:"id" help:"Approval ids (apr_…)."`
	JSON bool     `help:"Print JSON, for scripts."`
}

func (c *denyCmd) Run(ctx context.Context) error {
	return decide(ctx, c.IDs, "deny", apitype.DecideScope{}, c.JSON)
}

// decide decides one approval, or several in one batch; a batch reports
// each outcome and fails if any failed.
func decide(ctx context.Context, ids []string, decision string, scope apitype.DecideScope, asJSON bool) error {
	if scope.Scope == string(approvalsapi.ScopeOnce) {
		scope.Scope = ""
	}
	if len(ids) == 1 {
		params, _ := json.Marshal(apitype.DecideArgs{ID: ids[0], Decision: decision, DecideScope: scope})
		res, err := daemonCall(ctx, apitype.MethodApprovalsDecide, params)
		if err != nil {
			return err
		}
		if asJSON {
			return printIndented(res)
		}
		var a approvalsapi.Approval
		if err := json.Unmarshal(res, &a); err != nil {
			return fmt.Errorf("malformed response: %w", err)
		}
		printDecided(os.Stdout, a)
		return nil
	}
	params, _ := json.Marshal(apitype.DecideBatchArgs{IDs: ids, Decision: decision, DecideScope: scope})
	res, err := daemonCall(ctx, apitype.MethodApprovalsBatch, params)
	if err != nil {
		return err
	}
	if asJSON {
		return printIndented(res)
	}
	var out []approvalsapi.BatchResult
	if err := json.Unmarshal(res, &out); err != nil {
		return fmt.Errorf("malformed response: %w", err)
	}
	failed := 0
	for _, r := range out {
		if r.Error != nil {
			failed++
			fmt.Printf("%s: %s\n", textsafe.Line(r.ID), textsafe.Line(r.Error.Error()))
			continue
		}
		printDecided(os.Stdout, r.Approval)
	}
	if failed > 0 {
		return fmt.Errorf("%d of %d approvals were not decided", failed, len(out))
	}
	return nil
}

func printDecided(w io.Writer, a approvalsapi.Approval) {
	if p := a.Proposal; a.State == approvalsapi.Pending && p != nil {
		// confirm_in_person: this command proposed; the person confirms.
		fmt.Fprintf(w, "%s proposed: %s\n  allows %s once you confirm it on the desktop notification or in the web console (`hostlink console`): confirm_in_person is on\n",
			textsafe.Line(a.ID), textsafe.Line(a.Action.Summary), textsafe.Line(p.Covers))
		return
	}
	fmt.Fprintf(w, "%s %s: %s\n", textsafe.Line(a.ID), textsafe.Line(string(a.State)), textsafe.Line(a.Action.Summary))
	if a.Grant != "" {
		fmt.Fprintf(w, "  grant %s (%s); list with `hostlink approvals grants`, end with `hostlink approvals revoke %s`\n",
			textsafe.Line(a.Grant), textsafe.Line(string(a.Scope)), textsafe.Line(a.Grant))
	}
}

type grantsCmd struct {
	JSON bool `help:"Print JSON, for scripts."`
}

func (c *grantsCmd) Run(ctx context.Context) error {
	res, err := daemonCall(ctx, apitype.MethodGrantsList, nil)
	if err != nil {
		return err
	}
	if c.JSON {
		return printIndented(res)
	}
	var list []approvalsapi.Grant
	if err := json.Unmarshal(res, &list); err != nil {
		return fmt.Errorf("malformed response: %w", err)
	}
	printGrants(os.Stdout, list)
	return nil
}

// printGrants shows each grant in force (what it covers, when it ends,
// its uses), then the ones that ended lately, marked ended.
func printGrants(w io.Writer, list []approvalsapi.Grant) {
	inForce := slices.IndexFunc(list, func(g approvalsapi.Grant) bool { return !g.Ended.IsZero() })
	if inForce < 0 {
		inForce = len(list)
	}
	if inForce == 0 {
		fmt.Fprintln(w, "no grants in force")
	}
	for i, g := range list {
		if i == inForce {
			fmt.Fprintln(w, "\nended lately:")
		}
		state := ""
		if !g.Ended.IsZero() {
			state = "  ENDED " + g.Ended.Local().Format(time.DateTime) + ": " + textsafe.Line(g.EndedWhy)
		}
		fmt.Fprintf(w, "%s  %s%s\n", textsafe.Line(g.ID), textsafe.Line(string(g.Scope)), state)
		fmt.Fprintf(w, "  covers: %s\n", textsafe.Line(g.Covers))
		if g.Ended.IsZero() {
			fmt.Fprintf(w, "  ends:   %s\n", textsafe.Line(g.Ends))
		}
		fmt.Fprintf(w, "  uses:   %d (granted %s by %s via %s)\n", g.Uses, g.Created.Local().Format(time.RFC3339),
			textsafe.Line(g.GrantedBy), textsafe.Line(g.GrantedVia))
	}
}

type revokeCmd struct {
	ID   string `arg:"" help:"Grant id (grt_…)."`
	JSON bool   `help:"Print JSON, for scripts."`
}

func (c *revokeCmd) Run(ctx context.Context) error {
	params, _ := json.Marshal(apitype.GrantArgs{ID: c.ID})
	res, err := daemonCall(ctx, apitype.MethodGrantsRevoke, params)
	if err != nil {
		return err
	}
	if c.JSON {
		return printIndented(res)
	}
	var g approvalsapi.Grant
	if err := json.Unmarshal(res, &g); err != nil {
		return fmt.Errorf("malformed response: %w", err)
	}
	fmt.Printf("%s revoked: it covered %s\n", textsafe.Line(g.ID), textsafe.Line(g.Covers))
	return nil
}

type saveCmd struct {
	ID    string `arg:"" help:"Grant id (grt_…)."`
	Apply bool   `help:"Write the TOML shown to the configuration and reload it."`
	JSON  bool   `help:"Print JSON, for scripts."`
}

func (c *saveCmd) Run(ctx context.Context) error {
	params, _ := json.Marshal(apitype.SaveGrantArgs{ID: c.ID, Apply: c.Apply})
	res, err := daemonCall(ctx, apitype.MethodGrantsSave, params)
	if err != nil {
		return err
	}
	if c.JSON {
		return printIndented(res)
	}
	var r apitype.SaveGrantResult
	if err := json.Unmarshal(res, &r); err != nil {
		return fmt.Errorf("malformed response: %w", err)
	}
	if r.Applied {
		fmt.Printf("written to %s and reloaded:\n", textsafe.Line(r.Config))
	} else {
		fmt.Printf("would write to %s (run again with --apply):\n", textsafe.Line(r.Config))
	}
	fmt.Print(textsafe.Block(r.TOML))
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
	if len(r.RestartNeeded) > 0 {
		fmt.Printf("not applied: %s changed too, which takes a restart of the daemon (hostlink stop, then start it again); a reload applies [policy] only\n",
			textsafe.Line(strings.Join(r.RestartNeeded, ", ")))
	}
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
