package main

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/devplatform"
)

// TestLinkAdvertisesOnlyAllowedShell: with commands enabled but denied by
// the policy, no HELLO offers shell or command_output and a command is
// refused as not granted; once a reload makes commands ask, the next
// session's HELLO offers them again (an approval can let them run).
func TestLinkAdvertisesOnlyAllowedShell(t *testing.T) {
	t.Parallel()
	bin := build(t)
	p := startPlatform(t, devplatform.Config{})
	home, env := linkEnv(t, p)
	var hl string
	for _, kv := range env {
		if v, ok := strings.CutPrefix(kv, "HOSTLINK_HOME="); ok {
			hl = v
		}
	}
	setCommands := func(mode string) {
		t.Helper()
		cfg := "[policy]\ncommands = \"" + mode + "\"\nplatform_folders = \"allow\"\n"
		if err := os.WriteFile(filepath.Join(hl, "config", "config.toml"), []byte(cfg), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	offers := func(what string, caps []string, want bool) {
		t.Helper()
		for _, c := range []string{"shell", "command_output"} {
			if slices.Contains(caps, c) != want {
				t.Errorf("%s HELLO capabilities %v: %s offered %v, want %v", what, caps, c, !want, want)
			}
		}
	}
	os.MkdirAll(filepath.Join(home, "proj"), 0o755)
	setCommands("deny")
	since := time.Now()
	startLinked(t, bin, env, p, "--enable-shell")
	ctrl := waitPeer(t, p, devplatform.ControlPeer, since)
	offers("control", ctrl.Hello.Capabilities, false)

	attach(t, ctrl, "denied", "proj")
	data := activate(t, p, ctrl, "denied")
	offers("denied session", data.Hello.Capabilities, false)
	typ, got := call(t, data, "EXECUTE_COMMAND", map[string]any{"argv": []string{"hostname"}})
	want(t, "a command where commands are denied", typ, got, "ERROR", "CAPABILITY_NOT_GRANTED")

	setCommands("ask")
	if out, err := run(t, env, bin, "reload", "--json"); err != nil {
		t.Fatalf("reload: %v %s", err, out)
	}
	attach(t, ctrl, "asks", "proj")
	data = activate(t, p, ctrl, "asks")
	offers("session after the reload", data.Hello.Capabilities, true)
}
