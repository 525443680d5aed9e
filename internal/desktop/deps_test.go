package desktop

import (
	"os"
	"os/exec"
	"runtime"
	"strings"
	"testing"
)

// TestBackendDependencies keeps each OS's desktop libraries in its own
// binary: purego (which links a runtime shim) only on macOS, the X11 and
// D-Bus clients only on Linux.
func TestBackendDependencies(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("checked on the Linux CI host, where the go tool runs")
	}
	goTool, err := exec.LookPath("go")
	if err != nil {
		t.Skipf("no go tool on PATH: %v", err)
	}
	forbidden := map[string][]string{
		"linux":   {"github.com/ebitengine/purego"},
		"windows": {"github.com/ebitengine/purego", "github.com/jezek/xgb", "github.com/godbus/dbus/v5"},
		"darwin":  {"github.com/jezek/xgb", "github.com/godbus/dbus/v5"},
	}
	required := map[string]string{
		"linux":   "github.com/jezek/xgb",
		"windows": "github.com/hostlink/hostlink/internal/desktop/win32",
		"darwin":  "github.com/ebitengine/purego",
	}
	for goos, bad := range forbidden {
		cmd := exec.Command(goTool, "list", "-deps", ".")
		cmd.Env = append(os.Environ(), "GOOS="+goos, "GOARCH=amd64", "CGO_ENABLED=0")
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("go list for %s: %v", goos, err)
		}
		deps := map[string]bool{}
		for _, l := range strings.Split(string(out), "\n") {
			deps[l] = true
		}
		for _, b := range bad {
			if deps[b] {
				t.Errorf("%s: internal/desktop depends on %s", goos, b)
			}
		}
		if !deps[required[goos]] {
			t.Errorf("%s: %s is not linked", goos, required[goos])
		}
	}
}
