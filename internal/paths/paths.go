// Package paths locates hostlink's directories: configuration, state, logs,
// the audit log, runtime sockets, and the default workspace.
//
// The layout follows each OS's conventions:
//
//	            Linux, WSL2                     macOS                                   Windows
//	Config      $XDG_CONFIG_HOME/hostlink       ~/Library/Application Support/hostlink  %LOCALAPPDATA%\hostlink
//	State       $XDG_STATE_HOME/hostlink        ~/Library/Application Support/hostlink  %LOCALAPPDATA%\hostlink
//	Logs        $XDG_STATE_HOME/hostlink/logs   ~/Library/Logs/hostlink                 %LOCALAPPDATA%\hostlink\logs
//	Audit       $XDG_STATE_HOME/hostlink        ~/Library/Logs/hostlink                 %LOCALAPPDATA%\hostlink\logs
//	Runtime     $XDG_RUNTIME_DIR/hostlink       (State)                                 (State)
//	Workspace   ~/hostlink-workspace            ~/Documents/hostlink-workspace          %USERPROFILE%\hostlink-workspace
//
// where XDG_CONFIG_HOME defaults to ~/.config, XDG_STATE_HOME to
// ~/.local/state, and Runtime falls back to State when XDG_RUNTIME_DIR is
// unset. As the XDG spec asks, relative values count as unset.
//
// Setting HOSTLINK_HOME to an absolute directory replaces all of that with a
// single self-contained tree, for tests, portable installs and running more
// than one instance:
//
//	Config     $HOSTLINK_HOME/config
//	State      $HOSTLINK_HOME/state
//	Logs       $HOSTLINK_HOME/logs
//	Audit      $HOSTLINK_HOME/audit
//	Runtime    $HOSTLINK_HOME/run
//	Workspace  $HOSTLINK_HOME/workspace
//
// Nothing here creates directories: callers create the ones they use, with
// permissions private to the user.
package paths

import (
	"fmt"
	"os"
	"path/filepath"
	"runtime"
)

// Dirs are hostlink's directories. All are absolute.
type Dirs struct {
	Config    string // holds config.toml
	State     string // token, keys, databases
	Logs      string // daemon logs
	Audit     string // holds audit.log
	Runtime   string // sockets and other per-session files
	Workspace string // the default workdir
}

// ConfigFile is the path of the configuration file.
func (d Dirs) ConfigFile() string { return filepath.Join(d.Config, "config.toml") }

// AuditFile is the path of the audit log.
func (d Dirs) AuditFile() string { return filepath.Join(d.Audit, "audit.log") }

// AuditKey is where the audit log's HMAC key is kept: in the state
// directory, private to the user, never in the log's own directory.
func (d Dirs) AuditKey() string { return filepath.Join(d.State, "audit.key") }

// AuditHead is where the head of the audit chain is kept: beside its key,
// so that removing the log's directory does not remove it.
func (d Dirs) AuditHead() string { return filepath.Join(d.State, "audit.head") }

// Resolve returns the directories for this host and user. It fails, rather
// than guess, when a variable the layout needs is unset or not absolute.
func Resolve() (Dirs, error) {
	// An unknown home is reported by resolve, and only if the layout needs
	// it: HOSTLINK_HOME alone is enough.
	home, _ := os.UserHomeDir()
	return resolve(runtime.GOOS, os.Getenv, home)
}

// resolve computes the layout for goos from its environment and the user's
// home directory ($HOME, or %USERPROFILE% on Windows).
func resolve(goos string, getenv func(string) string, home string) (Dirs, error) {
	if h := getenv("HOSTLINK_HOME"); h != "" {
		if !isAbs(goos, h) {
			return Dirs{}, notAbs("HOSTLINK_HOME", h)
		}
		return Dirs{
			Config:    join(goos, h, "config"),
			State:     join(goos, h, "state"),
			Logs:      join(goos, h, "logs"),
			Audit:     join(goos, h, "audit"),
			Runtime:   join(goos, h, "run"),
			Workspace: join(goos, h, "workspace"),
		}, nil
	}
	if !isAbs(goos, home) {
		if goos == "windows" {
			return Dirs{}, notAbs("%USERPROFILE%", home)
		}
		return Dirs{}, notAbs("$HOME", home)
	}
	switch goos {
	case "windows":
		local := getenv("LOCALAPPDATA")
		if !isAbs(goos, local) {
			return Dirs{}, notAbs("%LOCALAPPDATA%", local)
		}
		base := join(goos, local, "hostlink")
		logs := join(goos, base, "logs")
		return Dirs{
			Config:    base,
			State:     base,
			Logs:      logs,
			Audit:     logs,
			Runtime:   base,
			Workspace: join(goos, home, "hostlink-workspace"),
		}, nil
	case "darwin":
		support := join(goos, home, "Library", "Application Support", "hostlink")
		logs := join(goos, home, "Library", "Logs", "hostlink")
		return Dirs{
			Config:    support,
			State:     support,
			Logs:      logs,
			Audit:     logs,
			Runtime:   support,
			Workspace: join(goos, home, "Documents", "hostlink-workspace"),
		}, nil
	}
	// Linux, WSL2, and any other Unix: the XDG Base Directory layout.
	state := join(goos, xdgDir(goos, getenv, "XDG_STATE_HOME", home, ".local/state"), "hostlink")
	run := state
	if r := getenv("XDG_RUNTIME_DIR"); isAbs(goos, r) {
		run = join(goos, r, "hostlink")
	}
	return Dirs{
		Config:    join(goos, xdgDir(goos, getenv, "XDG_CONFIG_HOME", home, ".config"), "hostlink"),
		State:     state,
		Logs:      join(goos, state, "logs"),
		Audit:     state,
		Runtime:   run,
		Workspace: join(goos, home, "hostlink-workspace"),
	}, nil
}

// xdgDir returns the XDG base directory in env var v, or home/fallback when it
// is unset. The spec says to ignore relative values, so they fall back too.
func xdgDir(goos string, getenv func(string) string, v, home, fallback string) string {
	if d := getenv(v); isAbs(goos, d) {
		return d
	}
	return join(goos, home, fallback)
}

func notAbs(name, value string) error {
	if value == "" {
		return fmt.Errorf("paths: %s is not set", name)
	}
	return fmt.Errorf("paths: %s %q is not an absolute path", name, value)
}
