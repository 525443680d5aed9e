package daemon

import (
	"context"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/ops/opstest"
	"github.com/hostlink/hostlink/internal/policy"
	"github.com/hostlink/hostlink/internal/sandbox"
	"github.com/hostlink/hostlink/internal/tstest"
)

// The daemon reports the sandbox it measured, in status and list_workdirs,
// and a command it runs on the default configuration cannot read
// hostlink's own files, while its receipt says why.
func TestSandboxThroughTheDaemon(t *testing.T) {
	for _, mode := range []string{"", "off"} {
		t.Run("sandbox="+mode, func(t *testing.T) {
			home := t.TempDir()
			t.Setenv("HOSTLINK_HOME", home)
			if mode != "" {
				cfg := filepath.Join(home, "config", "config.toml")
				os.MkdirAll(filepath.Dir(cfg), 0o700)
				os.WriteFile(cfg, []byte("[commands]\nsandbox = \""+mode+"\"\n"), 0o600)
			}
			d, err := Open(Options{EnableShell: true})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			want := sandbox.Effective(sandbox.Mode(d.Config.Commands.Sandbox))
			st := d.Status()
			if st.Sandbox == nil || st.Sandbox.String() != want.String() {
				t.Fatalf("status sandbox %v, want %v", st.Sandbox, want)
			}
			res, code := opstest.Call(context.Background(), d.Registry, "list_workdirs", map[string]any{})
			if code != "" || res["command_sandbox"] != want.String() {
				t.Fatalf("list_workdirs %v %s, want command_sandbox %q", res, code, want)
			}
			if mode == "" && want.Mode != sandbox.Workdir {
				if runtime.GOOS == "windows" && tstest.UnderWine() {
					t.Skipf("Wine does not implement integrity levels (%s): the Windows sandbox stays unverified here", want.Reason)
				}
				tstest.Missing(t, "commands cannot be sandboxed here: "+want.Reason)
			}
			pol := policy.AllowAll()
			d.pol.engine.Set(pol)
			secret := filepath.Join(d.Dirs.State, "canary")
			os.WriteFile(secret, []byte("canary-secret"), 0o600)
			// Windows' low integrity level keeps writes, not reads, from
			// hostlink's files (README's sandbox table), so there the
			// sandboxed command tries to overwrite the file.
			command := "cat " + secret
			writes := runtime.GOOS == "windows" && mode == ""
			switch {
			case writes:
				command = `echo x> "` + secret + `"`
			case runtime.GOOS == "windows":
				command = `type "` + secret + `"`
			}
			r, code := opstest.Call(context.Background(), d.Registry, "run_command", map[string]any{"command": command})
			if code != "" {
				t.Fatalf("run_command: %s", code)
			}
			out := r["stdout"].(map[string]any)["head"].(string)
			if r["sandbox"] != d.sandboxDescription() {
				t.Errorf("receipt sandbox %q, want %q", r["sandbox"], d.sandboxDescription())
			}
			switch mode {
			case "":
				hint, _ := r["sandbox_hint"].(string)
				if b, _ := os.ReadFile(secret); string(b) != "canary-secret" {
					t.Fatalf("sandboxed command changed hostlink's file to %q", b)
				}
				if (!writes && strings.Contains(out, "canary-secret")) || r["exit_code"] == 0.0 || !strings.Contains(hint, "hostlink's own") {
					t.Fatalf("sandboxed: %v", r)
				}
			case "off":
				if !strings.Contains(out, "canary-secret") {
					t.Fatalf("unsandboxed: %v", r)
				}
			}
		})
	}
}

// Agent runtimes get the commands' sandbox, writable in the workdirs open
// to workspace-write agents and no others; none with the sandbox off.
func TestAgentSandbox(t *testing.T) {
	for _, mode := range []string{"workdir", "off"} {
		t.Run(mode, func(t *testing.T) {
			home := t.TempDir()
			t.Setenv("HOSTLINK_HOME", home)
			ws, ro := filepath.Join(home, "ws"), filepath.Join(home, "ro")
			os.MkdirAll(ws, 0o755)
			os.MkdirAll(ro, 0o755)
			cfg := filepath.Join(home, "config.toml")
			os.WriteFile(cfg, []byte("[commands]\nsandbox = \""+mode+"\"\n[agents]\nenabled = true\n"+
				"[[workdirs]]\nalias = \"ws\"\npath = '"+ws+"'\nagent_mode = \"workspace-write\"\n"+
				"[[workdirs]]\nalias = \"ro\"\npath = '"+ro+"'\nagent_mode = \"read-only\"\n"), 0o600)
			d, err := Open(Options{ConfigPath: cfg})
			if err != nil {
				t.Fatal(err)
			}
			defer d.Close()
			p := d.agentSandbox()
			if mode == "off" {
				if p != nil {
					t.Fatalf("sandbox off, yet agents get %+v", p)
				}
				return
			}
			wsReal, _ := filepath.EvalSymlinks(ws)
			if p == nil || !slices.Contains(p.Writable, wsReal) && !slices.Contains(p.Writable, ws) || slices.Contains(p.Writable, ro) {
				t.Fatalf("agent sandbox %+v: want %s writable and %s not", p, ws, ro)
			}
			if !slices.Contains(p.Protected, d.Dirs.State) || !slices.Contains(p.Protected, cfg) {
				t.Fatalf("agent sandbox protects %q", p.Protected)
			}
		})
	}
}
