package link_test

import (
	"encoding/json"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/daemon/daemontest"
	"github.com/hostlink/hostlink/internal/devplatform"
	"github.com/hostlink/hostlink/internal/link"
	"github.com/hostlink/hostlink/internal/sandbox"
)

// TestShellSandboxFrame: the commands' confinement reaches a platform
// that grants shell_sandbox, in a SHELL_SANDBOX frame after HELLO_ACK,
// and nothing of it reaches one that does not (upstream's HELLO has no
// field for it).
func TestShellSandboxFrame(t *testing.T) {
	st := sandbox.Status{Mode: sandbox.Workdir, Mechanism: "landlock", Unenforced: []string{"udp"}, LandlockABI: 4}
	for _, tt := range []struct {
		name   string
		deny   []string
		status sandbox.Status
		want   bool
	}{
		{"granted", nil, st, true},
		{"not granted", []string{"shell_sandbox"}, st, false},
		{"commands not confined", nil, sandbox.Status{Mode: sandbox.Off, Mechanism: "none", Reason: "r"}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			f := newFixtureConfig(t, devplatform.Config{Deny: tt.deny}, daemontest.AllowAll, func(o *link.Options) {
				o.Session, o.LegacyRoot = "sb", root
				o.Shell, o.ShellSandbox = true, func() sandbox.Status { return tt.status }
			})
			data := f.peer(t, "sb", time.Time{})
			// A reply shows the handshake's frames have all arrived.
			send(t, data, "PING", map[string]any{})
			frames := data.Frames("SHELL_SANDBOX")
			if !tt.want {
				if len(frames) > 0 {
					t.Fatalf("SHELL_SANDBOX sent: %s", frames[0].Payload)
				}
				return
			}
			if len(frames) != 1 {
				t.Fatalf("%d SHELL_SANDBOX frames", len(frames))
			}
			var got sandbox.Status
			if err := json.Unmarshal(frames[0].Payload, &got); err != nil || got.Mechanism != "landlock" || got.LandlockABI != 4 || len(got.Unenforced) != 1 {
				t.Fatalf("SHELL_SANDBOX %s: %v", frames[0].Payload, err)
			}
		})
	}
}
