package main

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestConfigErrorsStopStartup(t *testing.T) {
	t.Parallel()
	bin := build(t)
	home, env := hostlinkEnv(t)
	ws := filepath.Join(home, "ws")
	os.MkdirAll(ws, 0o755)
	tests := []struct {
		name, toml string
		want       []string
	}{
		{"unknown key", "[limits]\nmax_read_bytes = 10\nmax_reed_bytes = 5\n", []string{"max_reed_bytes", ":3"}},
		{"unknown workdir key", "[[workdirs]]\nalias = \"a\"\npath = \"" + filepath.ToSlash(ws) + "\"\nreadonly = true\n", []string{"readonly", ":4"}},
		{"wrong type", "[limits]\nmax_list_entries = \"many\"\n", []string{"max_list_entries", ":2"}},
		{"non-loopback listen", "[server]\nlisten = \"0.0.0.0:7717\"\n", []string{"listen", ":2"}},
		{"lan listen", "\n[server]\nlisten = \"192.168.1.5:7717\"\n", []string{"listen", ":3"}},
	}
	for _, tt := range tests {
		cfg := filepath.Join(t.TempDir(), "config.toml")
		os.WriteFile(cfg, []byte(tt.toml), 0o600)
		for _, cmd := range []string{"serve", "mcp"} {
			out, err := run(t, env, bin, "--config", cfg, cmd)
			if err == nil {
				t.Errorf("%s: %s started with a bad config", tt.name, cmd)
				continue
			}
			for _, w := range tt.want {
				if !strings.Contains(out, w) {
					t.Errorf("%s: %s error %q does not name %q", tt.name, cmd, strings.TrimSpace(out), w)
				}
			}
		}
	}
}

func TestListenFlagMustBeLoopback(t *testing.T) {
	t.Parallel()
	bin := build(t)
	_, env := hostlinkEnv(t)
	for _, addr := range []string{"0.0.0.0:0", "[::]:0", "example.com:80"} {
		if out, err := run(t, env, bin, "serve", "--listen", addr); err == nil {
			t.Errorf("serve --listen %s started: %s", addr, out)
		}
	}
}

func TestAuditVerifyDetectsTampering(t *testing.T) {
	t.Parallel()
	bin := build(t)
	home, env := hostlinkEnv(t)
	seen := nodeClient(t, env, "stdio", bin)
	if seen["ok"] != true {
		t.Fatalf("client: %v", seen)
	}
	// The daemon `hostlink mcp` started writes the log until it stops.
	stopDaemon(t, env, bin)
	if out, err := run(t, env, bin, "audit", "verify"); err != nil {
		t.Fatalf("verify on an untouched log: %v\n%s", err, out)
	}
	logPath := filepath.Join(home, "audit", "audit.log")
	orig, err := os.ReadFile(logPath)
	if err != nil {
		t.Fatal(err)
	}
	lines := strings.SplitAfter(string(orig), "\n")
	// Change one byte in the middle of line 5 (a digit in its timestamp or
	// any other character): verify must fail and name line 5.
	for _, off := range []int{2, len(lines[4]) / 2, len(lines[4]) - 3} {
		tampered := []byte(string(orig))
		pos := len(strings.Join(lines[:4], "")) + off
		tampered[pos] ^= 0x01
		os.WriteFile(logPath, tampered, 0o600)
		out, err := run(t, env, bin, "audit", "verify")
		if err == nil {
			t.Errorf("verify passed after byte %d of line 5 changed", off)
		}
		if !strings.Contains(out, "line 5") {
			t.Errorf("verify output does not name line 5: %s", out)
		}
	}
	os.WriteFile(logPath, orig, 0o600)
	if out, err := run(t, env, bin, "audit", "verify"); err != nil {
		t.Fatalf("verify after restoring: %v\n%s", err, out)
	}
}

func TestInfo(t *testing.T) {
	t.Parallel()
	bin := build(t)
	home, env := hostlinkEnv(t)
	out, err := run(t, env, bin, "info", "--json")
	if err != nil {
		t.Fatalf("info: %v\n%s", err, out)
	}
	var info struct {
		Platform  string `json:"platform"`
		Arch      string `json:"arch"`
		MachineID string `json:"machine_id"`
		Dirs      struct {
			Workspace string `json:"Workspace"`
		} `json:"dirs"`
	}
	if err := json.Unmarshal([]byte(out), &info); err != nil {
		t.Fatalf("info --json: %v\n%s", err, out)
	}
	if info.Platform == "" || info.Arch == "" || len(info.MachineID) != 36 {
		t.Errorf("info = %+v", info)
	}
	if !strings.HasPrefix(info.Dirs.Workspace, home) {
		t.Errorf("HOSTLINK_HOME not honoured: workspace %q", info.Dirs.Workspace)
	}
}
