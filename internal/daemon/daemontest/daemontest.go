// Package daemontest opens a real daemon for tests, in a private
// HOSTLINK_HOME, so that the registries a test calls are the ones the
// daemon assembles (same policy, guards, limits and registrations as in
// production) rather than a fixture of the test's own.
package daemontest

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/daemon"
)

// AllowAll is a [policy] table that allows every action, for tests of the
// operations rather than of the policy.
const AllowAll = `
[policy]
files_read = "allow"
files_write = "allow"
commands = "allow"
computer = "allow"
computer_observe = "allow"
agents = "allow"
platform_folders = "allow"
`

// Config is what a test daemon is configured with.
type Config struct {
	// Workdirs are workdir aliases: each is a directory of that name in
	// the daemon's home, made here. None means the default workspace.
	Workdirs []string
	// TOML is the rest of the configuration file, e.g. AllowAll.
	TOML string
}

// Open opens a daemon configured with c, in a fresh HOSTLINK_HOME, closed
// when the test ends. It returns the daemon and its home.
func Open(t testing.TB, c Config, o daemon.Options) (*daemon.Daemon, string) {
	t.Helper()
	home := t.TempDir()
	if h, err := filepath.EvalSymlinks(home); err == nil {
		home = h
	}
	t.Setenv("HOSTLINK_HOME", home)
	var cfg strings.Builder
	for _, a := range c.Workdirs {
		dir := filepath.Join(home, a)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		cfg.WriteString("[[workdirs]]\nalias = \"" + a + "\"\npath = '" + dir + "'\n")
	}
	cfg.WriteString(c.TOML)
	o.ConfigPath = filepath.Join(home, "config.toml")
	if err := os.WriteFile(o.ConfigPath, []byte(cfg.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := daemon.Open(o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d, home
}
