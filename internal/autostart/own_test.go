package autostart

import (
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"

	"github.com/hostlink/hostlink/internal/paths"
)

// TestProgramFiles: a program linked into a prefix's bin (Homebrew, a
// symlink in ~/.local/bin) is guarded under both names, with the
// completions of both prefixes.
func TestProgramFiles(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need a privilege on Windows")
	}
	base, _ := filepath.EvalSymlinks(t.TempDir())
	keg := filepath.Join(base, "Cellar", "hostlink", "1.0", "bin", "hostlink")
	link := filepath.Join(base, "bin", "hostlink")
	os.MkdirAll(filepath.Dir(keg), 0o755)
	os.MkdirAll(filepath.Dir(link), 0o755)
	os.WriteFile(keg, nil, 0o755)
	if err := os.Symlink(keg, link); err != nil {
		t.Fatal(err)
	}
	got := programFiles([]string{link})
	for _, want := range []string{
		link, keg,
		filepath.Join(base, "etc", "bash_completion.d", "hostlink"),
		filepath.Join(base, "Cellar", "hostlink", "1.0", "share", "zsh", "site-functions", "_hostlink"),
		filepath.Join(base, "share", "fish", "vendor_completions.d", "hostlink.fish"),
	} {
		if !slices.Contains(got, want) {
			t.Errorf("programFiles lacks %s: %v", want, got)
		}
	}
	if got := programFiles([]string{filepath.Join(base, "tools", "hostlink")}); len(got) != 1 {
		t.Errorf("a program outside a bin directory: %v, want it alone", got)
	}
}

// TestOwnFiles: the running program and every unit path of this OS, the
// systemd ones with their drop-in directories, every service's drop-ins
// and the user manager's configuration and environment (a
// HOSTLINK_HOME=… in environment.d moves the next start's configuration
// to wherever an agent wrote one).
func TestOwnFiles(t *testing.T) {
	home := t.TempDir()
	dirs := paths.Dirs{State: filepath.Join(home, "state")}
	env := map[string]string{"XDG_CONFIG_HOME": filepath.Join(home, "cfg")}
	got := OwnFiles(dirs, home, func(k string) string { return env[k] })
	exe, _ := os.Executable()
	want := []string{exe}
	switch runtime.GOOS {
	case "linux":
		for _, u := range []string{
			filepath.Join(home, "cfg", "systemd", "user", SystemdUnit),
			filepath.Join(home, "cfg", "systemd", "user.control", SystemdUnit),
			filepath.Join(home, ".local", "share", "systemd", "user", SystemdUnit),
		} {
			want = append(want, u, u+".d", filepath.Join(filepath.Dir(u), "service.d"))
		}
		want = append(want, filepath.Join(home, "cfg", "systemd", "user.conf"), filepath.Join(home, "cfg", "systemd", "user.conf.d"),
			filepath.Join(home, "cfg", "environment.d"))
	case "darwin":
		want = append(want, filepath.Join(home, "Library", "LaunchAgents", LaunchdLabel+".plist"))
	case "windows":
		want = append(want, filepath.Join(dirs.State, TaskFile))
	}
	for _, w := range want {
		if !slices.Contains(got, w) {
			t.Errorf("OwnFiles lacks %s: %v", w, got)
		}
	}
}
