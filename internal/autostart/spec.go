package autostart

import (
	"fmt"
	"os"
	"os/user"
	"path/filepath"
	"runtime"

	"github.com/hostlink/hostlink/internal/paths"
)

// ForThisUser returns the spec for this OS, this user and this hostlink
// binary, running `hostlink serve` with args after it. HOSTLINK_HOME, when
// set, is carried into the unit so the daemon uses the same directories.
func ForThisUser(dirs paths.Dirs, args []string) (*Spec, error) {
	exe, err := os.Executable()
	if err != nil {
		return nil, fmt.Errorf("autostart: locating hostlink: %w", err)
	}
	if resolved, err := filepath.EvalSymlinks(exe); err == nil {
		exe = resolved
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return nil, err
	}
	s := &Spec{Kind: ForOS(runtime.GOOS), Exe: exe, Args: append([]string{"serve"}, args...), Home: home, Dirs: dirs, UID: os.Getuid()}
	if h := os.Getenv("HOSTLINK_HOME"); h != "" {
		s.Env = map[string]string{"HOSTLINK_HOME": h}
	}
	if u, err := user.Current(); err == nil {
		s.User = u.Username
	}
	return s, nil
}
