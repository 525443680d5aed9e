package daemon

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/hostlink/hostlink/internal/capture"
)

// cleanupEvery is how often expired captures are removed while running.
const cleanupEvery = time.Hour

// openCommands opens the capture store when the local user enabled command
// execution; assemble then gives each registry its command service over
// it. When disabled no store is opened and the command operations are not
// registered at all, so no transport can offer them.
func (d *Daemon) openCommands(enable bool) error {
	cc := d.Config.Commands
	if !enable && !cc.Enabled {
		return nil
	}
	store, err := capture.Open(capture.Options{
		Dir:            filepath.Join(d.Dirs.State, "captures"),
		Retention:      time.Duration(cc.RetentionHours) * time.Hour,
		MaxStreamBytes: cc.MaxStreamBytes,
	})
	if err != nil {
		return fmt.Errorf("command output store: %w", err)
	}
	d.captures = store
	ctx, cancel := context.WithCancel(context.Background())
	d.stopCleanup = cancel
	go store.RunCleanup(ctx, cleanupEvery)
	return nil
}

// closeCommands closes the store, once the registries' command services
// have ended their commands.
func (d *Daemon) closeCommands() {
	if d.captures == nil {
		return
	}
	d.stopCleanup()
	d.captures.Close()
}
