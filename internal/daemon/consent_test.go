package daemon

import (
	"errors"
	"testing"
)

func TestConsentDecision(t *testing.T) {
	tests := []struct {
		name    string
		enabled bool
		goos    string
		ready   bool
		reason  string
		exit    bool
	}{
		{"macOS permission missing", true, "darwin", false, "permission_pending", true},
		{"macOS ready", true, "darwin", true, "", false},
		{"macOS other reason", true, "darwin", false, "quartz_unavailable", false},
		{"macOS computer use off", false, "darwin", false, "permission_pending", false},
		{"Linux Wayland", true, "linux", false, "wayland", false},
		{"Windows not ready", true, "windows", false, "permission_pending", false},
	}
	for _, tc := range tests {
		err := consentDecision(tc.enabled, tc.goos, tc.ready, tc.reason)
		var ce *ConsentError
		if got := errors.As(err, &ce); got != tc.exit {
			t.Errorf("%s: exit %v (%v)", tc.name, got, err)
		}
		if ce != nil && ce.ExitCode() != 78 {
			t.Errorf("%s: exit code %d", tc.name, ce.ExitCode())
		}
	}
}
