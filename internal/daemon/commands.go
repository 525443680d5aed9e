package daemon

import (
	"context"
	"fmt"
	"path/filepath"
	"time"

	"github.com/hostlink/hostlink/internal/capture"
	"github.com/hostlink/hostlink/internal/commands"
)

// cleanupEvery is how often expired captures are removed while running.
const cleanupEvery = time.Hour

// openCommands opens the capture store and, when the local user enabled
// command execution, registers the command operations. When disabled they
// are not registered at all, so no transport can offer them.
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
	d.Commands = commands.New(d.Files, store, commands.Options{
		MaxConcurrent:  cc.MaxConcurrent,
		DefaultTimeout: time.Duration(cc.DefaultTimeoutSeconds) * time.Second,
		MaxTimeout:     time.Duration(cc.MaxTimeoutSeconds) * time.Second,
		InlineBytes:    cc.InlineOutputBytes,
		Sandbox:        d.sandboxPolicy(),
	})
	commands.Register(d.Registry, d.Commands)
	d.Files.SetCommandSandbox(d.sandboxDescription)
	ctx, cancel := context.WithCancel(context.Background())
	d.stopCleanup = cancel
	go store.RunCleanup(ctx, cleanupEvery)
	return nil
}

// closeCommands ends every running command and closes the store.
func (d *Daemon) closeCommands() {
	if d.Commands == nil {
		return
	}
	d.stopCleanup()
	d.Commands.Close()
	d.captures.Close()
}
