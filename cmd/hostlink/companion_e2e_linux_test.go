package main

import (
	"encoding/json"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/desktop/xvfbtest"
)

// companionCall runs `hostlink call --json` and decodes its one line.
func companionCall(t *testing.T, env []string, bin, op string, args any) map[string]any {
	t.Helper()
	b, _ := json.Marshal(args)
	out, _ := run(t, env, bin, "call", "--json", op, string(b))
	var m map[string]any
	if err := json.Unmarshal(lastLineOf([]byte(out)), &m); err != nil {
		t.Fatalf("%s: %v\n%s", op, err, out)
	}
	return m
}

func freeLoopbackPort(t *testing.T) string {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().String()
}

// TestCompanionTwoProcesses: a runtime hostlink (its own HOME, no
// display, as in a container) and a companion hostlink (another HOME,
// on an Xvfb desktop) pair through the CLI; the runtime runs a command
// and observes and acts on the desktop through the companion; revoking
// on the runtime disconnects the companion and its credential is refused
// from then on.
func TestCompanionTwoProcesses(t *testing.T) {
	x := xvfbtest.Start(t, 640, 480)
	bin := build(t)
	addr := freeLoopbackPort(t)
	companionScenario(t, x, bin, bin, fmt.Sprintf("listen = %q\n", addr), addr)
}

// companionScenario runs the runtime through rtBin (hostlink, or a
// wrapper that puts it in a network namespace) with the [companion]
// settings listen, and the companion through bin, dialing addr.
func companionScenario(t *testing.T, x *xvfbtest.Display, rtBin, bin, listen, addr string) {
	rtHome, rtEnv := hostlinkEnv(t)
	cfg := "[computer]\nenabled = true\n[companion]\n" + listen + allowPolicy
	if err := os.WriteFile(filepath.Join(rtHome, "config", "config.toml"), []byte(cfg), 0o600); err != nil {
		t.Fatal(err)
	}
	rtEnv = append(rtEnv, "DISPLAY=", "WAYLAND_DISPLAY=")
	startServe(t, rtBin, rtEnv)

	_, hostEnv := hostlinkEnv(t)
	hostEnv = append(hostEnv, "DISPLAY="+x.Name, "WAYLAND_DISPLAY=", "DBUS_SESSION_BUS_ADDRESS=",
		"HOSTLINK_CREDENTIAL_BACKEND=encrypted-file", "KEYCHAIN_PASSPHRASE=companion-test")

	out, err := run(t, rtEnv, rtBin, "companion", "pair-code")
	if err != nil {
		t.Fatalf("pair-code: %v\n%s", err, out)
	}
	code := string(lastLineOf([]byte(out)))
	if out, err := run(t, hostEnv, bin, "companion", "pair", "--runtime", addr, "--code", code); err != nil {
		t.Fatalf("pair: %v\n%s", err, out)
	}
	startCompanion := func() (*exec.Cmd, chan error, *strings.Builder) {
		cmd := exec.Command(bin, "companion", "--runtime", addr, "--commands")
		cmd.Env = hostEnv
		var stderr strings.Builder
		cmd.Stderr = &stderr
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		done := make(chan error, 1)
		finished := make(chan struct{})
		go func() { done <- cmd.Wait(); close(finished) }()
		t.Cleanup(func() { cmd.Process.Kill(); <-finished })
		return cmd, done, &stderr
	}
	_, done, stderr := startCompanion()
	deadline := time.Now().Add(20 * time.Second)
	for {
		st := companionCall(t, rtEnv, rtBin, "companion_status", map[string]any{})
		if c, _ := st["connected"].([]any); len(c) == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the companion did not connect: %v\n%s", st, stderr.String())
		}
		time.Sleep(100 * time.Millisecond)
	}

	res := companionCall(t, rtEnv, rtBin, "companion_run_command", map[string]any{"argv": []string{"sh", "-c", "echo hello from the host; echo oops >&2; exit 3"}})
	if res["transfer"] != "system_command_output_v1" || res["stdout"] != "hello from the host\n" || res["stderr"] != "oops\n" ||
		res["receipt"].(map[string]any)["exit_code"] != float64(3) {
		t.Fatalf("companion_run_command: %v", res)
	}

	ds := companionCall(t, rtEnv, rtBin, "computer_desktops", map[string]any{})["desktops"].([]any)
	if len(ds) != 1 || !strings.HasPrefix(ds[0].(map[string]any)["id"].(string), "companion:") {
		t.Fatalf("desktops: %v", ds)
	}
	obs := companionCall(t, rtEnv, rtBin, "computer_observe", map[string]any{})
	if img, _ := obs["image"].(map[string]any); img == nil || img["width"] != float64(640) {
		t.Fatalf("observe: %v", obs)
	}
	act := companionCall(t, rtEnv, rtBin, "computer_act", map[string]any{"observation_id": obs["observation_id"], "action": "move", "x": 200, "y": 100})
	if rc, _ := act["receipt"].(map[string]any); rc == nil || rc["status"] != "accepted" {
		t.Fatalf("act: %v", act)
	}
	if c := act["observation"].(map[string]any)["cursor"].(map[string]any); c["x"] != float64(200) || c["y"] != float64(100) {
		t.Fatalf("cursor after the act: %v", c)
	}

	if out, err := run(t, rtEnv, rtBin, "companion", "unpair", "--all"); err != nil {
		t.Fatalf("unpair on the runtime: %v\n%s", err, out)
	}
	select {
	case err := <-done:
		if err == nil || !strings.Contains(stderr.String(), "COMPANION_NOT_PAIRED") {
			t.Fatalf("companion after revocation: %v\n%s", err, stderr.String())
		}
	case <-time.After(20 * time.Second):
		t.Fatal("the companion stayed connected after its pairing was revoked")
	}
	// The same credential, still in the host's store, is refused.
	if out, err := run(t, hostEnv, bin, "companion", "--runtime", addr); err == nil || !strings.Contains(out, "COMPANION_NOT_PAIRED") {
		t.Fatalf("the revoked credential: %v\n%s", err, out)
	}
	if out, err := run(t, hostEnv, bin, "companion", "unpair", "--runtime", addr); err != nil || !strings.Contains(out, "deleted the local credential") {
		t.Fatalf("unpair on the host: %v\n%s", err, out)
	}
	if out, err := run(t, rtEnv, rtBin, "audit", "verify"); err != nil {
		t.Fatalf("audit verify: %v\n%s", err, out)
	}
}
