package update

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/autostart"
)

func TestPlanFor(t *testing.T) {
	for kind, want := range map[autostart.Kind][]string{
		autostart.Systemd:       {"systemctl --user restart hostlink.service"},
		autostart.Launchd:       {"launchctl kickstart -k gui/501/dev.hostlink.serve"},
		autostart.TaskScheduler: {`schtasks /End /TN \hostlink\hostlink`, `schtasks /Run /TN \hostlink\hostlink`},
	} {
		var got []string
		for _, c := range planFor(kind, 501).restart {
			got = append(got, strings.Join(c, " "))
		}
		if !slices.Equal(got, want) {
			t.Errorf("%s: restart %q, want %q", kind, got, want)
		}
	}
}

// TestRestart runs Restart against a systemctl that records what it is
// asked (systemd's user manager does not run here): it restarts only what
// the manager reports active.
func TestRestart(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("a shell-script systemctl")
	}
	for _, active := range []bool{true, false} {
		dir := t.TempDir()
		log := filepath.Join(dir, "log")
		code := "3"
		if active {
			code = "0"
		}
		script := "#!/bin/sh\necho \"$*\" >> " + log + "\ncase \"$2\" in is-active) exit " + code + " ;; esac\nexit 0\n"
		os.WriteFile(filepath.Join(dir, "systemctl"), []byte(script), 0o755)
		t.Setenv("PATH", dir)
		r, err := Restart(context.Background(), autostart.Systemd, 1000)
		if err != nil {
			t.Fatal(err)
		}
		calls, _ := os.ReadFile(log)
		wantCalls := "--user is-active --quiet hostlink.service\n"
		if active {
			wantCalls += "--user restart hostlink.service\n"
		}
		if string(calls) != wantCalls || (len(r.Commands) > 0) != active {
			t.Errorf("active=%v: systemctl called with %q, Restart = %+v", active, calls, r)
		}
	}
	// No systemctl at all: nothing to restart, no error.
	t.Setenv("PATH", t.TempDir())
	if r, err := Restart(context.Background(), autostart.Systemd, 1000); err != nil || len(r.Commands) != 0 {
		t.Errorf("without systemctl: %+v, %v", r, err)
	}
}
