package daemon

import (
	"log/slog"
	"os"
	"sync"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/autostart"
	"github.com/hostlink/hostlink/internal/logging"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/version"
)

// The ways a daemon runs, as its log's start line says (Daemon.Mode).
const (
	ModeServe       = "serve"        // `hostlink serve` run by the user
	ModeAutoStarted = "auto-started" // started by `hostlink mcp`; stops when idle
	ModeService     = "service"      // started by the service manager (hostlink install)
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
func (d *Daemon) openLogging(mode string) {
	l, err := logging.Open(logging.Options{Dir: d.Dirs.Logs, Level: d.Config.Log.Level, MaxFileBytes: d.Config.Log.MaxFileBytes})
	where := "stderr"
	if err != nil {
		slog.Warn("cannot open the log; logging to stderr", "err", err)
	} else {
		logs.Store(d, &daemonLog{l: l, prev: slog.Default()})
		slog.SetDefault(l.Logger)
		where = l.Where
	}
	d.Mode = runMode(mode, where, os.Getenv)
	slog.Info("hostlink starting", "version", d.Info.Version, "commit", version.Get().Commit, "mode", d.Mode,
		"config", d.configFile, "state", d.Dirs.State, "log", where, "pid", os.Getpid())
}

// runMode is how the daemon runs: under a service manager when systemd's
// journal is its stderr or launchd started it under hostlink's label,
// else what the command line said (serve by default). A Windows scheduled
// task is not told apart from serve.
func runMode(mode, logWhere string, getenv func(string) string) string {
	switch {
	case logWhere == "journal":
		return ModeService + " (systemd)"
	case getenv("XPC_SERVICE_NAME") == autostart.LaunchdLabel:
		return ModeService + " (launchd)"
	case mode == "":
		return ModeServe
	}
	return mode
}

// loggedAuditor is the registries' auditor: every record goes to the
// audit log, and a failed call's code also goes to hostlink's log, so that
// the log shows what went wrong without the audit log beside it.
type loggedAuditor struct{ *audit.Log }

func (a loggedAuditor) Append(r audit.Record) error {
	err := a.Log.Append(r)
	if r.Code != "" && r.Code != "OK" {
		slog.Warn("call failed", "op", r.Op, "code", r.Code, "transport", string(r.Transport), "peer", r.Peer)
	}
	if err != nil {
		slog.Error("audit log write failed", "op", r.Op, "code", "AUDIT_UNAVAILABLE", "err", err)
	}
	return err
}

var _ ops.Auditor = loggedAuditor{}

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
