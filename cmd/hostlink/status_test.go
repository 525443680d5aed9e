package main

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/apitype"
	"github.com/hostlink/hostlink/internal/version"
)

func TestPrintStatus(t *testing.T) {
	started := time.Date(2026, 12, 1, 4, 0, 0, 0, time.UTC)
	tests := []struct {
		name string
		st   apitype.Status
		want []string
	}{
		{"idle", apitype.Status{
			Version: "1.2.3", PID: 42, Started: started, UptimeSeconds: 3725,
			Build:        version.Info{Version: "1.2.3", Commit: "0123456789abcdef", Date: "2026-11-01T12:00:00Z", Go: "go1.26.8", Target: "linux/amd64"},
			Link:         apitype.LinkStatus{State: "not_configured"},
			Capabilities: []apitype.CapabilityStatus{{Name: "files", Ready: true}, {Name: "shell"}},
			Workdirs:     []apitype.WorkdirStatus{{Alias: "notes", Path: "/n", ReadOnly: true}},
		}, []string{
			"hostlink 1.2.3 running, pid 42, up 1h2m5s (since 2026-12-01T04:00:00Z)",
			"build: 1.2.3 (commit 0123456789ab, 2026-11-01T12:00:00Z, go1.26.8, linux/amd64)\n",
			"link: not_configured\n", "files  ready", "shell  not ready",
			"notes  /n (read-only)", "running commands: none", "running tasks: none",
		}},
		{"busy", apitype.Status{
			Commands: []apitype.CommandStatus{{ID: "c1", Command: "make test", Started: started}},
			Tasks:    []apitype.TaskStatus{{ID: "t1", Title: "fix the build", Started: started}},
		}, []string{
			"running commands: 1\n  c1  make test (since 2026-12-01T04:00:00Z)",
			"running tasks: 1\n  t1  fix the build (since 2026-12-01T04:00:00Z)",
		}},
		{"companions", apitype.Status{
			Companion: &apitype.CompanionStatus{Listen: "127.0.0.1:7718", Connected: []apitype.CompanionConnection{
				{ID: "c-1", Name: "desk", Route: "companion", OS: "linux", Version: 1, Connected: "2026-12-01T04:00:00Z"}},
				Helper: &apitype.CompanionHelper{Program: "/mnt/c/hl.exe", Starts: 3, LastError: "the helper exited"}},
		}, []string{
			"companions: listening on 127.0.0.1:7718, 1 connected\n  c-1  desk (companion, linux, protocol 1, since 2026-12-01T04:00:00Z)",
			"WSL interop helper /mnt/c/hl.exe not connected (started 3 times): the helper exited",
		}},
		{"update available", apitype.Status{
			Update: &apitype.UpdateStatus{URL: "https://x/latest", Current: "1.2.3", Latest: "1.3.0", Available: true, CheckedAt: &started,
				Command: "hostlink update"},
		}, []string{"update: hostlink 1.3.0 is available (this is 1.2.3); to install it: hostlink update\n"}},
		{"update up to date", apitype.Status{
			Update: &apitype.UpdateStatus{URL: "https://x/latest", Current: "1.3.0", Latest: "1.3.0", CheckedAt: &started},
		}, []string{"update: up to date (latest release 1.3.0, checked 2026-12-01T04:00:00Z)\n"}},
		{"update failed", apitype.Status{
			Update: &apitype.UpdateStatus{URL: "https://x/latest", Current: "1.3.0", CheckedAt: &started, Error: "no network"},
		}, []string{"update: the last check (2026-12-01T04:00:00Z) failed: no network\n"}},
		{"hostile strings are escaped", apitype.Status{
			Commands: []apitype.CommandStatus{{ID: "c1", Command: spoof, Started: started}},
			Tasks:    []apitype.TaskStatus{{ID: "t1", Title: "fix\u202e\u2066 it", Started: started}},
			Workdirs: []apitype.WorkdirStatus{{Alias: "w", Path: "/x\x1b[2J"}},
		}, []string{
			"c1  " + spoofShown, `t1  fix\u202e\u2066 it`, `/x\x1b[2J (read-write)`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var b bytes.Buffer
			printStatus(&b, tt.st)
			noHidden(t, b.String())
			for _, w := range tt.want {
				if !strings.Contains(b.String(), w) {
					t.Errorf("missing %q in:\n%s", w, b.String())
				}
			}
		})
	}
}

// TestPrintStatusAligns: each section's second column starts at one place,
// whatever the widths of the names before it.
func TestPrintStatusAligns(t *testing.T) {
	var b bytes.Buffer
	printStatus(&b, apitype.Status{
		Transports: []apitype.TransportStatus{
			{Name: "mcp-http", Address: "http://127.0.0.1:7717/mcp"}, {Name: "ipc", Address: "/run/hostlink.sock"}},
		Capabilities: []apitype.CapabilityStatus{{Name: "files", Ready: true}, {Name: "computer_control_long_name", Reason: "disabled"}},
		Workdirs:     []apitype.WorkdirStatus{{Alias: "a", Path: "/a"}, {Alias: "a-much-longer-alias", Path: "/b", ReadOnly: true}},
	})
	for _, want := range []string{
		"transports:\n  mcp-http  http://127.0.0.1:7717/mcp\n  ipc       /run/hostlink.sock\n",
		"capabilities:\n  files                       ready\n  computer_control_long_name  disabled\n",
		"workdirs:\n  a                    /a (read-write)\n  a-much-longer-alias  /b (read-only)\n",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("missing\n%s\nin:\n%s", want, b.String())
		}
	}
}
