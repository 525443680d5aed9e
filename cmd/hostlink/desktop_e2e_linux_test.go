package main

import (
	"bytes"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/desktop/xvfbtest"
	"github.com/hostlink/hostlink/internal/tstest"
)

// TestComputerToolsWithTypeScriptClient runs `hostlink mcp` with computer
// control enabled on a private Xvfb and drives it with the MCP TypeScript
// SDK: image content arrives as PNG of the screen's size, acts return
// receipts and fresh images, a used reference is refused.
func TestComputerToolsWithTypeScriptClient(t *testing.T) {
	t.Parallel()
	modules := tstest.Env(t, "HOSTLINK_NODE_MODULES", ".ci/run installs the MCP TypeScript SDK and sets it")
	x := xvfbtest.Start(t, 800, 600)
	x.Xterm("e2e-term", 30, 40, t.TempDir())
	bin := build(t)
	home, env := hostlinkEnv(t)
	if err := os.MkdirAll(filepath.Join(home, "config"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "config", "config.toml"), []byte(ephemeralListen+"[computer]\nenabled = true\n"+allowPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	// The client's `hostlink mcp` starts a daemon; it ends with the test.
	stopDaemonAtEnd(t, env, bin)
	env = append(env, "DISPLAY="+x.Name, "WAYLAND_DISPLAY=", "DBUS_SESSION_BUS_ADDRESS=")

	dir := t.TempDir()
	script, err := os.ReadFile(filepath.Join("testdata", "mcp_computer_client.mjs"))
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(dir, "client.mjs"), script, 0o644)
	if err := os.Symlink(modules, filepath.Join(dir, "node_modules")); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command("node", filepath.Join(dir, "client.mjs"), bin, "800", "600")
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	var seen struct {
		OK        bool     `json:"ok"`
		Error     string   `json:"error"`
		Windows   []string `json:"windows"`
		Receipt   string   `json:"receipt"`
		Cursor    struct{ X, Y int }
		ReuseCode string `json:"reuse_code"`
		PNGBytes  int    `json:"png_bytes"`
	}
	if jerr := json.Unmarshal(lastLineOf(out), &seen); jerr != nil || err != nil || !seen.OK {
		t.Fatalf("node client: %v\nstdout: %s\nstderr: %s", err, out, stderr.String())
	}
	if !strings.Contains(strings.Join(seen.Windows, ","), "e2e-term") || seen.Receipt != "accepted" ||
		seen.Cursor.X != 12 || seen.Cursor.Y != 34 || seen.ReuseCode != "OBSERVATION_CONSUMED" {
		t.Fatalf("client saw %+v", seen)
	}
	t.Logf("PNG of %d bytes through the TypeScript client", seen.PNGBytes)
	if out, err := run(t, env, bin, "audit", "verify"); err != nil {
		t.Fatalf("audit verify: %v\n%s", err, out)
	}
}
