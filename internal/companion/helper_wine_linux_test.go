package companion

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/desktop/xvfbtest"
	"github.com/hostlink/hostlink/internal/ops/opstest"
	"github.com/hostlink/hostlink/internal/tstest"
)

// wineEnv is the environment that runs Windows programs in the Wine
// prefix .ci/wine-test prepares (with its ProcessPrng shim, which Go
// binaries need under Wine 8). Without it the test skips, unless
// HOSTLINK_REQUIRE_INTEGRATION is set.
func wineEnv(t *testing.T) []string {
	t.Helper()
	need := func(why string) { tstest.Missing(t, why+" (run bash .ci/wine-test once to prepare the prefix)") }
	if _, err := exec.LookPath("wine"); err != nil {
		need("wine is not installed")
	}
	home := os.Getenv("HOSTLINK_WINE_HOME")
	if home == "" {
		h, _ := os.UserHomeDir()
		home = filepath.Join(h, ".cache", "hostlink-wine")
	}
	prefix := filepath.Join(home, "prefix")
	if _, err := os.Stat(filepath.Join(prefix, "drive_c", "windows", "system32", "bcryptprimitives.dll")); err != nil {
		need("no prepared Wine prefix in " + prefix)
	}
	return []string{"WINEPREFIX=" + prefix, "WINEARCH=win64", "WINEDEBUG=-all",
		"WINEDLLOVERRIDES=mscoree,mshtml=;winemenubuilder.exe=d;bcryptprimitives=n,b", "DISPLAY=", "WAYLAND_DISPLAY="}
}

// TestHelperRouteWindowsExe: the interop route with a real Windows
// program. hostlink.exe, built for windows/amd64, runs through Wine the
// way WSL runs it through binfmt interop, started by the runtime as
// [companion] wsl_helper would; the runtime runs a cmd.exe command on
// "Windows" and observes and acts on its desktop (Wine's, on an Xvfb)
// through it, output and pixels verified chunk by chunk, and the helper
// audits it all in its own (Windows-side) log.
func TestHelperRouteWindowsExe(t *testing.T) {
	env := wineEnv(t)
	exe := filepath.Join(t.TempDir(), "hostlink.exe")
	build := exec.Command("go", "build", "-o", exe, "../../cmd/hostlink")
	build.Env = append(os.Environ(), "GOOS=windows", "GOARCH=amd64", "CGO_ENABLED=0")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building hostlink.exe: %v\n%s", err, out)
	}
	home := t.TempDir()
	// Wine enforces no integrity levels, so the Windows sandbox cannot be
	// set up there: without this the helper refuses every command.
	os.MkdirAll(filepath.Join(home, "config"), 0o700)
	os.WriteFile(filepath.Join(home, "config", "config.toml"), []byte("[commands]\nsandbox = \"off\"\n"), 0o600)
	x := xvfbtest.Start(t, 800, 600)
	r := newRig(t, true)
	r.rt.StartHelper(Helper{Argv: []string{"wine", exe}, Commands: true,
		// Wine's Z: drive is the Unix root; its screen is the Xvfb.
		Env: append(env, "HOSTLINK_HOME=Z:"+strings.ReplaceAll(home, "/", `\`), "KEYCHAIN_PASSPHRASE=", "DISPLAY="+x.Name)})
	deadline := time.Now().Add(90 * time.Second)
	for len(r.rt.Sessions()) != 1 {
		if time.Now().After(deadline) {
			t.Fatalf("the Windows helper did not connect: %+v", r.rt.HelperState())
		}
		time.Sleep(100 * time.Millisecond)
	}
	if s := r.rt.Sessions()[0]; s.OS != "windows" || s.Route != RouteWSLInterop {
		t.Fatalf("helper session: %+v", s)
	}
	res := r.run(map[string]any{"command": "echo hello from windows& echo oops 1>&2& exit /b 4", "shell": "cmd"})
	if res.TransferError != nil || res.Transfer != CapOutput || res.Receipt.Status != "exited" || res.Receipt.ExitCode == nil ||
		*res.Receipt.ExitCode != 4 || !strings.Contains(res.Stdout, "hello from windows") || !strings.Contains(res.Stderr, "oops") {
		t.Fatalf("cmd.exe through the Windows helper: %+v %+v stdout %q stderr %q", res.TransferError, res.Receipt, res.Stdout, res.Stderr)
	}

	// The Windows desktop (Wine's, on the Xvfb) through the helper.
	ctx := context.Background()
	m, code := opstest.Call(ctx, r.reg, "computer_desktops", map[string]any{})
	ds, _ := m["desktops"].([]any)
	if code != "" || len(ds) != 1 || !strings.HasPrefix(ds[0].(map[string]any)["id"].(string), "companion:"+helperID+"/") {
		t.Fatalf("desktops through the Windows helper: %s %v", code, m)
	}
	obs, code := opstest.Call(ctx, r.reg, "computer_observe", map[string]any{})
	if img, _ := obs["image"].(map[string]any); code != "" || img == nil || img["width"] != float64(800) || img["height"] != float64(600) {
		t.Fatalf("observe through the Windows helper: %s %v", code, obs)
	}
	act, code := opstest.Call(ctx, r.reg, "computer_act", map[string]any{"observation_id": obs["observation_id"], "action": "move", "x": 321, "y": 123})
	if rc, _ := act["receipt"].(map[string]any); code != "" || rc == nil || rc["status"] != "accepted" {
		t.Fatalf("act through the Windows helper: %s %v", code, act)
	}
	if c := act["observation"].(map[string]any)["cursor"].(map[string]any); c["x"] != float64(321) || c["y"] != float64(123) {
		t.Fatalf("cursor after the move: %v", c)
	}
	r.rt.Close()
	recs := auditRecords(t, filepath.Join(home, "audit"))
	var found bool
	for _, l := range recs {
		found = found || (l.Op == "companion.command.run" && l.Transport == "wsl_interop" && strings.Contains(string(l.Details), res.Receipt.CaptureID))
	}
	if !found || !slices.Contains(auditOps(recs), "companion.desktop.dispatch") {
		t.Fatalf("the Windows helper did not audit the command: %v", auditOps(recs))
	}
}
