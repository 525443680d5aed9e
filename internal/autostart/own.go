package autostart

import (
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"

	"github.com/hostlink/hostlink/internal/completion"
	"github.com/hostlink/hostlink/internal/paths"
)

// OwnFiles returns the files that decide what runs as hostlink, whether
// they exist yet or not: the program as started and the hostlink first on
// PATH, with what they resolve to and the shell completions beside them
// (programFiles), and the unit Install writes for this user, with for
// systemd its drop-in directory and the same names where systemd would
// prefer them (user.control) or use them instead (the data directory),
// with what else configures it and the environment it starts in (every
// service's drop-ins, the user manager's user.conf and environment.d). A
// replaced program or unit runs unconfined at the next start, a
// completion in the user's shell, so file operations and commands may
// read these but never change them (jail.Options.Guarded,
// sandbox.Policy.Guarded). home is the user's home directory; getenv
// reads XDG_CONFIG_HOME and XDG_DATA_HOME.
func OwnFiles(dirs paths.Dirs, home string, getenv func(string) string) []string {
	var exes []string
	if exe, err := os.Executable(); err == nil {
		exes = append(exes, exe)
	}
	if exe, err := exec.LookPath("hostlink"); err == nil {
		if abs, err := filepath.Abs(exe); err == nil {
			exes = append(exes, abs)
		}
	}
	out := programFiles(exes)
	s := &Spec{Kind: ForOS(runtime.GOOS), Home: home, Dirs: dirs, Getenv: getenv}
	units := []string{s.Path()}
	if s.Kind == Systemd {
		data := getenv("XDG_DATA_HOME")
		if !filepath.IsAbs(data) {
			data = filepath.Join(home, ".local", "share")
		}
		control := filepath.Join(filepath.Dir(units[0])+".control", SystemdUnit)
		units = append(units, control, filepath.Join(data, "systemd", "user", SystemdUnit))
		for _, u := range units[:3] {
			// The unit's own drop-ins, and the drop-ins of every service
			// (service.d), which change it as much.
			units = append(units, u+".d", filepath.Join(filepath.Dir(u), "service.d"))
		}
		// The user manager's environment, which the unit starts in: a
		// HOSTLINK_HOME or XDG_CONFIG_HOME set there is where the next
		// start reads its configuration from.
		cfg := filepath.Dir(filepath.Dir(units[0])) // $XDG_CONFIG_HOME/systemd
		units = append(units, filepath.Join(cfg, "user.conf"), filepath.Join(cfg, "user.conf.d"),
			filepath.Join(filepath.Dir(cfg), "environment.d"))
	}
	out = append(out, units...)
	slices.Sort(out)
	return slices.Compact(out)
}

// programFiles returns exes, what each resolves to, and for each in a bin
// directory the completions installed beside it (completion.Installed,
// relative to bin's parent).
func programFiles(exes []string) []string {
	var out []string
	for _, exe := range exes {
		out = append(out, exe)
		if r, err := filepath.EvalSymlinks(exe); err == nil && r != exe {
			out = append(out, r)
		}
	}
	for _, exe := range slices.Clone(out) {
		if dir := filepath.Dir(exe); filepath.Base(dir) == "bin" {
			for _, c := range completion.Installed {
				out = append(out, filepath.Join(filepath.Dir(dir), filepath.FromSlash(c)))
			}
		}
	}
	return out
}
