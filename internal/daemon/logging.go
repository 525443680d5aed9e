package daemon

import (
	"log/slog"
	"sync"

	"github.com/hostlink/hostlink/internal/logging"
)

// logs holds each open daemon's log and the default logger it replaced.
var logs sync.Map // *Daemon → *daemonLog

type daemonLog struct {
	l    *logging.Logger
	prev *slog.Logger
}

// openLogging makes hostlink's log (journal or rotated file, level from
// [log]) the default slog logger. A log that cannot be opened is reported
// on the current logger and hostlink goes on logging there: the audit log,
// not this one, is the record that must not be lost.
func (d *Daemon) openLogging() {
	l, err := logging.Open(logging.Options{Dir: d.Dirs.Logs, Level: d.Config.Log.Level, MaxFileBytes: d.Config.Log.MaxFileBytes})
	if err != nil {
		slog.Warn("cannot open the log; logging to stderr", "err", err)
		return
	}
	logs.Store(d, &daemonLog{l: l, prev: slog.Default()})
	slog.SetDefault(l.Logger)
	slog.Info("hostlink starting", "version", d.Info.Version, "log", l.Where)
}

// LogLocation says where the log goes ("journal" or the file), or "" when
// it could not be opened.
func (d *Daemon) LogLocation() string {
	if v, ok := logs.Load(d); ok {
		return v.(*daemonLog).l.Where
	}
	return ""
}

// closeLogging restores the previous default logger and closes the file.
func (d *Daemon) closeLogging() {
	v, ok := logs.LoadAndDelete(d)
	if !ok {
		return
	}
	dl := v.(*daemonLog)
	slog.SetDefault(dl.prev)
	dl.l.Close()
}
