package daemon

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/companionapi"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/tstest"
)

// TestWSLHelperConfig: [companion] wsl_helper starts the helper only
// where the WSL interop route is available; elsewhere companion_status
// says why and nothing is started.
func TestWSLHelperConfig(t *testing.T) {
	helper := "/mnt/c/nowhere/hostlink.exe"
	for _, tc := range []struct {
		name      string
		available bool
	}{{"not WSL", false}, {"WSL", true}} {
		t.Run(tc.name, func(t *testing.T) {
			home := t.TempDir()
			t.Setenv("HOSTLINK_HOME", home)
			os.MkdirAll(filepath.Join(home, "config"), 0o700)
			if err := os.WriteFile(filepath.Join(home, "config", "config.toml"), []byte("[companion]\nwsl_helper = \""+helper+"\"\n"), 0o600); err != nil {
				t.Fatal(err)
			}
			old := wslInterop
			t.Cleanup(func() { wslInterop = old })
			wslInterop = func(context.Context) companionapi.Route {
				if tc.available {
					return companionapi.Route{Available: true}
				}
				return companionapi.Route{Reason: "not_wsl", Detail: "test"}
			}
			d, err := Open(Options{})
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { d.Close() })
			allowAll(d)
			var st companionapi.StatusResult
			tstest.Eventually(10*time.Second, func() bool {
				out, err := d.Registry.Call(context.Background(), ops.Caller{Transport: audit.MCPStdio}, "companion_status", []byte(`{}`), nil)
				if err != nil {
					t.Fatal(err)
				}
				b, _ := json.Marshal(out)
				json.Unmarshal(b, &st)
				return !tc.available || (st.Helper != nil && st.Helper.LastError != "")
			})
			if !tc.available {
				if st.Helper != nil {
					t.Fatalf("a helper was started outside WSL: %+v", st.Helper)
				}
				return
			}
			if st.Helper == nil || st.Helper.Program != helper || !strings.Contains(st.Helper.LastError, "starting "+helper) {
				t.Fatalf("helper status %+v", st.Helper)
			}
		})
	}
}
