package agent

import (
	"testing"

	"github.com/hostlink/hostlink/internal/agentapi"
)

func TestReadinessJudge(t *testing.T) {
	tests := []struct {
		version   string
		loggedOut bool
		ready     bool
		reason    string
	}{
		{"1.2.3", false, true, ""},
		{"1.2.4", false, true, "cli 1.2.4 is not the tested version 1.2.3"},
		{"1.2.3", true, false, "not logged in (run `cli login`)"},
		{"1.2.4", true, false, "not logged in (run `cli login`)"},
	}
	for _, tt := range tests {
		rd := Judge(agentapi.Readiness{Installed: true, Version: tt.version}, "cli", "1.2.3", tt.loggedOut, "run `cli login`")
		if rd.Ready != tt.ready || rd.Reason != tt.reason || !rd.Installed || rd.Version != tt.version {
			t.Errorf("version %s, logged out %v: %+v", tt.version, tt.loggedOut, rd)
		}
	}
}
