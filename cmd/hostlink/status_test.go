package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/companion"
	"github.com/hostlink/hostlink/internal/daemon"
	"github.com/hostlink/hostlink/internal/version"
)

func TestPrintStatus(t *testing.T) {
	started := time.Date(2026, 12, 1, 4, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		st   daemon.Status
		want []string
	}{
		{"idle", daemon.Status{
			Version: "1.2.3", PID: 42, Started: started, UptimeSeconds: 3725,
			Build:        version.Info{Version: "1.2.3", Commit: "0123456789abcdef", Date: "2026-11-01T12:00:00Z", Go: "go1.26.8", Target: "linux/amd64"},
			Link:         daemon.LinkStatus{State: "not_configured"},
			Capabilities: []daemon.CapabilityStatus{{Name: "files", Ready: true}, {Name: "shell"}},
			Workdirs:     []daemon.WorkdirStatus{{Alias: "notes", Path: "/n", ReadOnly: true}},
		}, []string{
			"hostlink 1.2.3 running, pid 42, up 1h2m5s (since 2026-12-01T04:00:00Z)",
			"build: 1.2.3 (commit 0123456789ab, 2026-11-01T12:00:00Z, go1.26.8, linux/amd64)\n",
			"link: not_configured\n", "files      ready", "shell      not ready",
			"notes      /n (read-only)", "running commands: none", "running tasks: none",
		}},
		{"busy", daemon.Status{
			Commands: []daemon.CommandStatus{{ID: "c1", Command: "make test", Started: started}},
			Tasks:    []daemon.TaskStatus{{ID: "t1", Title: "fix the build", Started: started}},
		}, []string{
			"running commands: 1\n  c1  make test (since 2026-12-01T04:00:00Z)",
			"running tasks: 1\n  t1  fix the build (since 2026-12-01T04:00:00Z)",
		}},
		{"companions", daemon.Status{
			Companion: &daemon.CompanionStatus{Listen: "127.0.0.1:7718", Connected: []companion.Connection{
				{ID: "c-1", Name: "desk", Route: "companion", OS: "linux", Version: 1, Connected: "2026-12-01T04:00:00Z"}},
				Helper: &companion.HelperStatus{Program: "/mnt/c/hl.exe", Starts: 3, LastError: "the helper exited"}},
		}, []string{
			"companions: listening on 127.0.0.1:7718, 1 connected\n  c-1        desk (companion, linux, protocol 1, since 2026-12-01T04:00:00Z)",
			"WSL interop helper /mnt/c/hl.exe not connected (started 3 times): the helper exited",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			printStatus(&b, tt.st)
			for _, w := range tt.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("missing %q in:\n%s", w, b.String())
				}
			}
		})
	}
}
