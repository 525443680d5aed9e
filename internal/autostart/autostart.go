package autostart

import (
	"bytes"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/hostlink/hostlink/internal/paths"
	"github.com/hostlink/hostlink/internal/private"
)

// Kind is a service manager.
type Kind string

const (
	Launchd       Kind = "launchd"
	Systemd       Kind = "systemd"
	TaskScheduler Kind = "task-scheduler"
)

// Names the units are installed under.
const (
	LaunchdLabel = "dev.hostlink.serve"
	SystemdUnit  = "hostlink.service"
	TaskName     = `\hostlink\hostlink`
	TaskFile     = "hostlink-task.xml"
)

// ForOS returns the service manager of goos.
func ForOS(goos string) Kind {
	switch goos {
	case "darwin":
		return Launchd
	case "windows":
		return TaskScheduler
	}
	return Systemd
}

// Spec is what the unit runs and where it goes.
type Spec struct {
	Kind Kind
	// Exe is hostlink's absolute path; Args follow it (serve, flags).
	Exe  string
	Args []string
	// Env is extra environment for the daemon (HOSTLINK_HOME when set);
	// never secrets. Task Scheduler has no per-task environment and
	// ignores it.
	Env map[string]string
	// Home is the user's home directory; Dirs are hostlink's directories.
	Home string
	Dirs paths.Dirs
	// Getenv reads XDG_CONFIG_HOME (default os.Getenv).
	Getenv func(string) string
	// UID is the user's id (launchctl's gui/UID domain); User is the
	// account name for the Task Scheduler logon trigger (DOMAIN\name).
	UID  int
	User string

	// packaged marks the unit the packages ship (PackagedSystemdUnit).
	packaged bool
}

// Result says what Install or Uninstall did and what the user runs next.
type Result struct {
	Kind     Kind     `json:"kind"`
	Path     string   `json:"path"`
	Changed  bool     `json:"changed"`  // the file was written or removed
	Commands []string `json:"commands"` // to run, in order
	Hints    []string `json:"hints,omitempty"`
	// Kept: Uninstall left the unit file for Commands, which remove it.
	Kept bool `json:"kept,omitempty"`
}

// Path is where the unit file goes.
func (s *Spec) Path() string {
	switch s.Kind {
	case Launchd:
		return filepath.Join(s.Home, "Library", "LaunchAgents", LaunchdLabel+".plist")
	case TaskScheduler:
		return filepath.Join(s.Dirs.State, TaskFile)
	}
	getenv := s.Getenv
	if getenv == nil {
		getenv = os.Getenv
	}
	base := getenv("XDG_CONFIG_HOME")
	if !filepath.IsAbs(base) {
		base = filepath.Join(s.Home, ".config")
	}
	return filepath.Join(base, "systemd", "user", SystemdUnit)
}

// Unit renders the unit file.
func (s *Spec) Unit() ([]byte, error) {
	// launchd and systemd units hold Unix paths, which are absolute when
	// rooted at /, even when the unit is generated elsewhere (tests).
	if !filepath.IsAbs(s.Exe) && (s.Kind == TaskScheduler || !strings.HasPrefix(s.Exe, "/")) {
		return nil, fmt.Errorf("autostart: executable %q is not an absolute path", s.Exe)
	}
	switch s.Kind {
	case Launchd:
		return launchdPlist(s)
	case Systemd:
		return systemdUnit(s)
	case TaskScheduler:
		return taskXML(s)
	}
	return nil, fmt.Errorf("autostart: unknown kind %q", s.Kind)
}

// registerCommands are what the user runs after Install.
func (s *Spec) registerCommands(path string) ([]string, []string) {
	switch s.Kind {
	case Launchd:
		domain := "gui/" + strconv.Itoa(s.UID)
		return []string{
			"launchctl bootout " + domain + "/" + LaunchdLabel + " 2>/dev/null; launchctl bootstrap " + domain + " " + shQuote(path),
		}, []string{"launchd starts hostlink now and at every login, and restarts it when it exits with an error"}
	case TaskScheduler:
		return []string{
			`schtasks /Create /TN "` + TaskName + `" /XML "` + path + `" /F`,
			`schtasks /Run /TN "` + TaskName + `"`,
		}, []string{"the task starts hostlink at every logon; /Run starts it now"}
	}
	return []string{
			"systemctl --user daemon-reload",
			"systemctl --user enable --now " + SystemdUnit,
		}, []string{
			"on a headless machine, let it run without a login session: loginctl enable-linger $USER",
			"without a keychain (tokens in the encrypted file), hand the unit the passphrase in memory only: " +
				"read -rs KEYCHAIN_PASSPHRASE; export KEYCHAIN_PASSPHRASE; systemctl --user import-environment KEYCHAIN_PASSPHRASE (again after each reboot)",
			"logs: journalctl --user -u " + SystemdUnit,
		}
}

// unregisterCommands are what the user runs after Uninstall, in order.
// systemd's stop and disable need the unit file (disable reads its
// [Install] section to find the links enable made), so removing it is
// one of them, before the daemon-reload that forgets it; launchd's bootout
// and schtasks go by name and need no file.
func (s *Spec) unregisterCommands(path string) []string {
	switch s.Kind {
	case Launchd:
		return []string{"launchctl bootout gui/" + strconv.Itoa(s.UID) + "/" + LaunchdLabel}
	case TaskScheduler:
		return []string{`schtasks /End /TN "` + TaskName + `"`, `schtasks /Delete /TN "` + TaskName + `" /F`}
	}
	return []string{
		"systemctl --user stop " + SystemdUnit,
		"systemctl --user disable " + SystemdUnit,
		"rm -f " + shQuote(path),
		"systemctl --user daemon-reload",
	}
}

// Install writes the unit file (private to the user) unless it already has
// this content, and returns the commands that register it. It never runs
// them.
func Install(s *Spec) (*Result, error) {
	unit, err := s.Unit()
	if err != nil {
		return nil, err
	}
	path := s.Path()
	res := &Result{Kind: s.Kind, Path: path}
	res.Commands, res.Hints = s.registerCommands(path)
	old, err := os.ReadFile(path)
	if err == nil && bytes.Equal(old, unit) {
		return res, nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, err
	}
	if s.Kind == Launchd && s.Dirs.Logs != "" {
		// launchd opens the job's stdout and stderr files but does not
		// create their directory.
		if err := private.MkdirAll(s.Dirs.Logs); err != nil {
			return nil, err
		}
	}
	if err := private.WriteFile(path, unit); err != nil {
		return nil, err
	}
	res.Changed = true
	return res, nil
}

// Uninstall returns the commands that unregister the unit, in the order
// they are run, and removes what none of them needs: the launchd plist and
// the Task Scheduler XML. A systemd unit stays for the stop and disable it
// prints, which come before its removal (unregisterCommands); only an
// enablement link left dangling by a unit removed earlier goes now. With
// nothing installed it changes nothing.
func Uninstall(s *Spec) (*Result, error) {
	path := s.Path()
	res := &Result{Kind: s.Kind, Path: path, Commands: s.unregisterCommands(path)}
	if s.Kind == Systemd {
		_, err := os.Stat(path)
		if err == nil {
			res.Kept = true
			return res, nil
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return nil, err
		}
		res.Commands = nil
		wants := filepath.Join(filepath.Dir(path), "default.target.wants", SystemdUnit)
		if target, err := os.Readlink(wants); err == nil && (target == path || filepath.Base(target) == SystemdUnit) {
			if err := os.Remove(wants); err != nil {
				return nil, err
			}
			res.Changed = true
			res.Commands = []string{"systemctl --user daemon-reload"}
		}
		return res, nil
	}
	switch err := os.Remove(path); {
	case err == nil:
		res.Changed = true
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	return res, nil
}

// Installed reports whether the unit file exists, and whether it runs exe.
func Installed(s *Spec) (present, current bool, err error) {
	b, err := os.ReadFile(s.Path())
	if errors.Is(err, fs.ErrNotExist) {
		return false, false, nil
	}
	if err != nil {
		return false, false, err
	}
	want, err := s.Unit()
	if err != nil {
		return true, false, err
	}
	return true, bytes.Equal(b, want), nil
}

// shQuote quotes a word for a POSIX shell when it needs it.
func shQuote(s string) string {
	for _, r := range s {
		if !(r == '/' || r == '.' || r == '-' || r == '_' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z') {
			return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
		}
	}
	return s
}
