package daemon

import (
	"context"
	"log/slog"
	"os"
	"path/filepath"

	"github.com/hostlink/hostlink/internal/config"
	"github.com/hostlink/hostlink/internal/update"
	"github.com/hostlink/hostlink/internal/version"
)

// newUpdateChecker is the update check [update] turns on; nil while it is
// off (the default).
func newUpdateChecker(c config.Update) (*update.Checker, error) {
	if !c.Check {
		return nil, nil
	}
	signers := update.ReleaseSigners()
	if c.AllowedSigners != "" {
		var err error
		if signers, err = update.LoadSigners(c.AllowedSigners); err != nil {
			return nil, err
		}
	}
	exe, err := os.Executable()
	if err == nil {
		if resolved, err := filepath.EvalSymlinks(exe); err == nil {
			exe = resolved
		}
	}
	return &update.Checker{URL: c.URL, Signers: signers, Current: version.Version, Command: update.UpdateCommand(exe),
		Log: slog.Default()}, nil
}

// runUpdateCheck checks for a newer release until ctx ends, when the
// check is on.
func (d *Daemon) runUpdateCheck(ctx context.Context) {
	if d.updates != nil {
		go d.updates.Run(ctx)
	}
}
