package autostart

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/tstest"
)

// TestSystemdUninstallCommands runs what uninstall prints, in its order,
// with a real systemctl against a unit directory (--global --root, as
// `systemctl --user` would against the user's): disable finds the unit it
// needs, and nothing is left behind. stop and daemon-reload need a
// running manager, which a test has not; they only go through the
// manager, not the files.
func TestSystemdUninstallCommands(t *testing.T) {
	systemctl := tstest.Tool(t, "systemctl")
	root := t.TempDir()
	s := testSpec(t, Systemd)
	s.Getenv = func(k string) string {
		if k == "XDG_CONFIG_HOME" {
			return filepath.Join(root, "etc") // units in root/etc/systemd/user: --global's directory
		}
		return ""
	}
	r, err := Install(s)
	if err != nil {
		t.Fatal(err)
	}
	sc := func(args ...string) {
		t.Helper()
		out, err := exec.Command(systemctl, append([]string{"--global", "--root=" + root}, args...)...).CombinedOutput()
		if err != nil {
			t.Fatalf("systemctl %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	sc("enable", SystemdUnit) // what install's printed commands do
	wants := filepath.Join(filepath.Dir(r.Path), "default.target.wants", SystemdUnit)
	if _, err := os.Lstat(wants); err != nil {
		t.Fatalf("enable made no link: %v", err)
	}

	u, err := Uninstall(s)
	if err != nil {
		t.Fatal(err)
	}
	var ran []string
	for _, c := range u.Commands {
		switch {
		case strings.HasPrefix(c, "systemctl --user disable "):
			sc(strings.Fields(c)[2:]...)
			ran = append(ran, "disable")
		case strings.HasPrefix(c, "rm "):
			if out, err := exec.Command("sh", "-c", c).CombinedOutput(); err != nil {
				t.Fatalf("%s: %v %s", c, err, out)
			}
			ran = append(ran, "rm")
		case strings.HasPrefix(c, "systemctl --user stop "):
			ran = append(ran, "stop")
		case c == "systemctl --user daemon-reload":
			ran = append(ran, "daemon-reload")
		default:
			t.Fatalf("unexpected command %q", c)
		}
	}
	if got := strings.Join(ran, " "); got != "stop disable rm daemon-reload" {
		t.Fatalf("commands in the order %q, want stop, disable, rm, daemon-reload", got)
	}
	var left []string
	filepath.Walk(root, func(p string, fi os.FileInfo, err error) error {
		if err == nil && !fi.IsDir() {
			left = append(left, p)
		}
		return nil
	})
	if len(left) > 0 {
		t.Fatalf("left behind: %q", left)
	}
}
