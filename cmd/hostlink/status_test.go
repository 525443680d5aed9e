package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/daemon"
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
			Link:         daemon.LinkStatus{State: "not_configured"},
			Capabilities: []daemon.CapabilityStatus{{Name: "files", Ready: true}, {Name: "shell"}},
			Workdirs:     []daemon.WorkdirStatus{{Alias: "notes", Path: "/n", ReadOnly: true}},
		}, []string{
			"hostlink 1.2.3 running, pid 42, up 1h2m5s (since 2026-12-01T04:00:00Z)",
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
