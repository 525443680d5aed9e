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
	"github.com/hostlink/hostlink/internal/tstest"
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
	t.Parallel()
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
	// As in a container: no display, no keychain.
	rtEnv = append(rtEnv, "DISPLAY=", "WAYLAND_DISPLAY=", "DBUS_SESSION_BUS_ADDRESS=", "KEYCHAIN_PASSPHRASE=")
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
	var st map[string]any
	if !tstest.Eventually(20*time.Second, func() bool {
		st = companionCall(t, rtEnv, rtBin, "companion_status", map[string]any{})
		c, _ := st["connected"].([]any)
		return len(c) == 1
	}) {
		t.Fatalf("the companion did not connect: %v\n%s", st, stderr.String())
	}

	res := companionCall(t, rtEnv, rtBin, "companion_run_command", map[string]any{"argv": []string{"sh", "-c", "echo hello from the host | tr a-z A-Z; echo oops >&2; exit 3"}})
	if res["transfer"] != "system_command_output_v1" || res["stdout"] != "HELLO FROM THE HOST\n" || res["stderr"] != "oops\n" ||
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

	// The host's audit log shows what the runtime did there, and who asked.
	tail, err := run(t, hostEnv, bin, "audit", "tail", "-n", "200", "--json")
	if err != nil {
		t.Fatalf("audit tail on the host: %v\n%s", err, tail)
	}
	for _, want := range []string{`"op":"companion.command.run"`, `"op":"companion.desktop.dispatch"`, `"peer":"runtime ` + addr + `"`, `"transport":"companion"`} {
		if !strings.Contains(tail, want) {
			t.Fatalf("the host's audit log lacks %s:\n%s", want, tail)
		}
	}
	if strings.Contains(tail, "HELLO FROM THE HOST") {
		t.Fatal("command output in the host's audit log")
	}
	if out, err := run(t, hostEnv, bin, "audit", "verify"); err != nil {
		t.Fatalf("audit verify on the host: %v\n%s", err, out)
	}

	waitGone := func(done chan error, stderr *strings.Builder) {
		t.Helper()
		select {
		case err := <-done:
			if err == nil || !strings.Contains(stderr.String(), "COMPANION_NOT_PAIRED") {
				t.Fatalf("companion after revocation: %v\n%s", err, stderr.String())
			}
		case <-time.After(20 * time.Second):
			t.Fatal("the companion stayed connected after its pairing was revoked")
		}
	}
	paired := func() int {
		p, _ := companionCall(t, rtEnv, rtBin, "companion_status", map[string]any{})["paired"].([]any)
		return len(p)
	}

	// hostlink unpair on the host: revoked at the runtime, which drops the
	// connection, and deleted locally.
	if out, err := run(t, hostEnv, bin, "unpair"); err != nil || !strings.Contains(out, "Unpaired from the runtime at "+addr) {
		t.Fatalf("unpair on the host: %v\n%s", err, out)
	}
	waitGone(done, stderr)
	if n := paired(); n != 0 {
		t.Fatalf("%d pairings left on the runtime after unpair on the host", n)
	}
	if out, err := run(t, hostEnv, bin, "companion", "--runtime", addr); err == nil || !strings.Contains(out, "not paired with the runtime") {
		t.Fatalf("companion after unpair on the host: %v\n%s", err, out)
	}

	// Pair again; hostlink unpair on the runtime revokes it.
	out, err = run(t, rtEnv, rtBin, "companion", "pair-code")
	if err != nil {
		t.Fatalf("pair-code: %v\n%s", err, out)
	}
	code = string(lastLineOf([]byte(out)))
	if out, err := run(t, hostEnv, bin, "companion", "pair", "--runtime", addr, "--code", code); err != nil {
		t.Fatalf("pair again: %v\n%s", err, out)
	}
	_, done, stderr = startCompanion()
	if !tstest.Eventually(20*time.Second, func() bool {
		c, _ := companionCall(t, rtEnv, rtBin, "companion_status", map[string]any{})["connected"].([]any)
		return len(c) == 1
	}) {
		t.Fatalf("the companion did not reconnect:\n%s", stderr.String())
	}
	if out, err := run(t, rtEnv, rtBin, "unpair"); err != nil || !strings.Contains(out, "Revoked 1 companion pairing") {
		t.Fatalf("unpair on the runtime: %v\n%s", err, out)
	}
	waitGone(done, stderr)
	// The same credential, still in the host's store, is refused.
	if out, err := run(t, hostEnv, bin, "companion", "--runtime", addr); err == nil || !strings.Contains(out, "COMPANION_NOT_PAIRED") {
		t.Fatalf("the revoked credential: %v\n%s", err, out)
	}
	if out, err := run(t, hostEnv, bin, "unpair"); err != nil || !strings.Contains(out, "had already revoked this pairing") {
		t.Fatalf("unpair on the host after the runtime revoked: %v\n%s", err, out)
	}
	if out, err := run(t, hostEnv, bin, "unpair"); err != nil || !strings.Contains(out, "nothing to do") {
		t.Fatalf("unpair with nothing paired: %v\n%s", err, out)
	}
	if out, err := run(t, rtEnv, rtBin, "audit", "verify"); err != nil {
		t.Fatalf("audit verify: %v\n%s", err, out)
	}
}
