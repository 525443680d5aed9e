package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/hostlink/hostlink/internal/apitype"
	"github.com/hostlink/hostlink/internal/autostart"
	"github.com/hostlink/hostlink/internal/update"
	"github.com/hostlink/hostlink/internal/version"
)

type updateCmd struct {
	Check          bool   `help:"Only say whether a newer release is available; change nothing."`
	To             string `help:"The release to install (default: the latest); with --base-url, the release that URL must hold." placeholder:"X.Y.Z"`
	BaseURL        string `name:"base-url" help:"Where the release's files are (default: the GitHub release of --to)." placeholder:"URL"`
	AllowedSigners string `name:"allowed-signers" type:"existingfile" help:"Verify SHA256SUMS.sig with the keys in this allowed-signers file instead of the hostlink release key." placeholder:"FILE"`
	AllowDowngrade bool   `name:"allow-downgrade" help:"Install the release even when it is not newer than this hostlink."`
	NoRestart      bool   `name:"no-restart" help:"Do not restart a daemon its service manager runs."`
}

// Run verifies the release and replaces this binary with its own, then
// restarts the daemon through its service manager or says how.
func (u *updateCmd) Run(ctx context.Context) error {
	exe, err := os.Executable()
	if err != nil {
		return err
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	current := version.Get().Version
	managed := update.ManagedExe(exe)
	if managed != nil && !u.Check {
		return fmt.Errorf("%s was installed by %s; update it there, not with hostlink update:\n  %s", exe, managed.Name, managed.Command)
	}

	signers := update.ReleaseSigners()
	if u.AllowedSigners != "" {
		if signers, err = update.LoadSigners(u.AllowedSigners); err != nil {
			return err
		}
	}
	base := u.BaseURL
	switch {
	case base == "" && u.To != "":
		base = update.VersionURL(u.To)
	case base == "":
		base = update.DefaultURL
	}
	rel, err := update.Fetch(ctx, update.Client(), base, signers)
	if err != nil {
		return err
	}
	fmt.Printf("Signature on %s/SHA256SUMS: good, by %s\n", rel.URL, rel.Signer.Describe())
	if u.To != "" {
		if c, ok := update.Compare(u.To, rel.Version); !ok || c != 0 {
			return fmt.Errorf("the release at %s is %s, not %s", rel.URL, rel.Version, u.To)
		}
	}

	if u.Check {
		c, ok := update.Compare(current, rel.Version)
		switch {
		case ok && c >= 0:
			fmt.Printf("hostlink %s is up to date (the release at %s is %s)\n", current, rel.URL, rel.Version)
		default:
			how := "hostlink update"
			if managed != nil {
				how = managed.Command
			}
			fmt.Printf("hostlink %s is available (this is %s); to install it: %s\n", rel.Version, current, how)
		}
		return nil
	}

	res, err := update.Install(ctx, rel, update.Options{Exe: exe, Current: current, GOOS: runtime.GOOS, GOARCH: runtime.GOARCH,
		AllowDowngrade: u.AllowDowngrade})
	if err != nil {
		if errors.Is(err, update.ErrDowngrade) {
			return fmt.Errorf("not updating: %w", err)
		}
		return err
	}
	if !res.Changed {
		fmt.Printf("hostlink %s is up to date (%s)\n", current, exe)
		return nil
	}
	fmt.Printf("Checksum of %s: good\n", res.Archive)
	fmt.Printf("Updated %s from %s to %s\n", exe, res.From, res.To)
	u.restart(ctx, res.To)
	return nil
}

// restart restarts the daemon through its service manager, or tells the
// user how when a daemon runs that no manager restarts.
func (u *updateCmd) restart(ctx context.Context, to string) {
	if !u.NoRestart {
		r, err := update.Restart(ctx, autostart.ForOS(runtime.GOOS), os.Getuid())
		switch {
		case err != nil:
			fmt.Printf("\nRestarting the daemon failed: %v\nRestart it yourself to run %s.\n", err, to)
			return
		case len(r.Commands) > 0:
			fmt.Printf("\nRestarted the daemon through its service manager (%s)\n", r.Commands[len(r.Commands)-1])
			return
		}
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	res, err := daemonCall(ctx, apitype.MethodStatus, nil)
	if err != nil {
		return // no daemon here: the next start runs the new binary
	}
	var st apitype.Status
	if json.Unmarshal(res, &st) == nil {
		fmt.Printf("\nThe running daemon (pid %d) is still hostlink %s. Restart it to run %s:\n", st.PID, st.Version, to)
		fmt.Println("  hostlink stop, then start it again as you did (hostlink serve)")
	}
}
