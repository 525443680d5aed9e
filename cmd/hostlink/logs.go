package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"time"

	"github.com/hostlink/hostlink/internal/autostart"
	"github.com/hostlink/hostlink/internal/logging"
	"github.com/hostlink/hostlink/internal/paths"
	"github.com/hostlink/hostlink/internal/textsafe"
)

type logsCmd struct {
	Path   bool `help:"Print the log file's path and exit."`
	N      int  `short:"n" default:"50" help:"Number of lines."`
	Follow bool `short:"f" help:"Keep printing lines as they are written."`
}

// Run prints the end of hostlink.log, where serve and an auto-started
// daemon log; a systemd service logs to the journal instead, which it
// points to.
func (l *logsCmd) Run(ctx context.Context) error {
	dirs, err := paths.Resolve()
	if err != nil {
		return err
	}
	path := filepath.Join(dirs.Logs, logging.FileName)
	if l.Path {
		fmt.Println(path)
		return nil
	}
	if runtime.GOOS == "linux" {
		if s, err := autostart.ForThisUser(dirs, nil); err == nil && s.Kind == autostart.Systemd {
			if present, _, _ := autostart.Installed(s); present {
				fmt.Fprintln(os.Stderr, "hostlink: the systemd service logs to the journal: journalctl --user -u "+autostart.SystemdUnit)
			}
		}
	}
	if _, err := os.Stat(path); errors.Is(err, fs.ErrNotExist) {
		// Nothing to show is not an empty log: say why.
		why := fmt.Sprintf("no log at %s yet: no hostlink daemon has run with this state directory (hostlink serve starts one; hostlink info shows the directories)", path)
		if !l.Follow {
			return errors.New(why)
		}
		fmt.Fprintln(os.Stderr, "hostlink: "+why+"; waiting for it")
	}
	print := func(b []byte) { os.Stdout.Write(textsafe.JSON(b)) }
	off, err := logging.Tail(path, l.N, print)
	if err != nil || !l.Follow {
		return err
	}
	return logging.Follow(ctx, path, off, 250*time.Millisecond, print)
}
