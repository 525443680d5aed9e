package main

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestInstallRefusesATemporaryBinary: install refuses, with
// EXECUTABLE_IS_TEMPORARY saying to build or install a binary first, the
// test's binary, which lives in the temporary directory; with another
// temporary directory it installs, and uninstall then prints stop and
// disable before the unit's removal, leaving the unit for them.
func TestInstallRefusesATemporaryBinary(t *testing.T) {
	t.Parallel()
	bin := build(t)
	home, env := defaultEnv(t)
	env = append(env, "HOME="+filepath.Join(home, "user"), "XDG_CONFIG_HOME="+filepath.Join(home, "user", ".config"))
	out, err := run(t, env, bin, "install")
	for _, want := range []string{"EXECUTABLE_IS_TEMPORARY", "go build", "go install", "release"} {
		if err == nil || !strings.Contains(out, want) {
			t.Errorf("install of a temporary binary: %v, %q does not say %s", err, out, want)
		}
	}
	if runtime.GOOS != "linux" {
		return
	}
	unit := filepath.Join(home, "user", ".config", "systemd", "user", "hostlink.service")
	if _, err := os.Stat(unit); !os.IsNotExist(err) {
		t.Fatalf("a refused install wrote the unit: %v", err)
	}
	env = append(env, "TMPDIR="+filepath.Join(home, "tmp"))
	if out, err := run(t, env, bin, "install"); err != nil || !strings.Contains(out, unit) {
		t.Fatalf("install: %v %s", err, out)
	}
	out, err = run(t, env, bin, "uninstall")
	if err != nil {
		t.Fatalf("uninstall: %v %s", err, out)
	}
	stop, disable, rm, reload := strings.Index(out, "systemctl --user stop"), strings.Index(out, "systemctl --user disable"),
		strings.Index(out, "rm -f "+unit), strings.Index(out, "systemctl --user daemon-reload")
	if stop < 0 || !(stop < disable && disable < rm && rm < reload) {
		t.Fatalf("uninstall does not print stop, disable, rm, daemon-reload in order:\n%s", out)
	}
	if _, err := os.Stat(unit); err != nil {
		t.Fatalf("uninstall removed the unit its printed disable needs: %v", err)
	}
}
