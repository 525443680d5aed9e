//go:build !windows

package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/devplatform"
)

// TestLinkCannotReachHostlinkHome is finding 1 of issue #16 through the
// platform link: a session attached to a folder holding hostlink's home
// read the bearer token and replaced config.toml through links whose
// targets put ".." after another link (t -> s/../state/http.token,
// u -> s/../config), and after a restart EXECUTE_COMMAND ran although
// commands had been off. The real binary is run against the reference
// platform with the default [commands] (off).
func TestLinkCannotReachHostlinkHome(t *testing.T) {
	t.Parallel()
	bin := build(t)
	p := startPlatform(t, devplatform.Config{})
	home, _ := filepath.EvalSymlinks(t.TempDir())
	proj := filepath.Join(home, "proj")
	hl := filepath.Join(proj, "hl") // HOSTLINK_HOME, inside the folder the platform picks
	cfgFile := filepath.Join(hl, "config", "config.toml")
	os.MkdirAll(filepath.Dir(cfgFile), 0o700)
	// The policy allows everything, so that only the jail stands between
	// the session and hostlink's own files; [commands] is left off.
	if err := os.WriteFile(cfgFile, []byte(allowPolicy), 0o600); err != nil {
		t.Fatal(err)
	}
	planted := "[commands]\nenabled = true\n" + allowPolicy
	os.WriteFile(filepath.Join(proj, "p.toml"), []byte(planted), 0o644)
	for name, target := range map[string]string{"s": "hl/state", "t": "s/../state/http.token", "u": "s/../config", "v": "s/.."} {
		if err := os.Symlink(target, filepath.Join(proj, name)); err != nil {
			t.Fatal(err)
		}
	}
	env := append(os.Environ(), "HOSTLINK_HOME="+hl, "HOME="+home, "USERPROFILE="+home, "HOSTLINK_PLATFORM_TOKEN="+p.token)

	session := func(id string) (*exec.Cmd, *devplatform.Peer) {
		since := time.Now()
		cmd := startLinked(t, bin, env, p)
		ctrl := waitPeer(t, p, devplatform.ControlPeer, since)
		att := attach(t, ctrl, id, "proj")
		if att["allowed_root"] != proj {
			t.Fatalf("attached %v, want %s", att["allowed_root"], proj)
		}
		return cmd, activate(t, p, ctrl, id)
	}
	cmd, data := session("sess-1")
	token, err := os.ReadFile(filepath.Join(hl, "state", "http.token"))
	if err != nil || len(token) == 0 {
		t.Fatalf("hostlink wrote no token: %v", err)
	}
	f := func(n string) string { return filepath.Join(proj, n) }
	for _, c := range []struct {
		typ     string
		payload map[string]any
	}{
		{"FILE_READ", map[string]any{"path": f("t")}},
		{"FILE_READ", map[string]any{"path": f("u/config.toml")}},
		{"FILE_READ", map[string]any{"path": f("v/state/http.token")}},
		{"FILE_READ", map[string]any{"path": f("hl/state/http.token")}},
		{"FILE_MOVE", map[string]any{"src": f("p.toml"), "dst": f("u/config.toml"), "overwrite": true}},
		{"FILE_MOVE", map[string]any{"src": f("hl"), "dst": f("elsewhere"), "overwrite": false}},
		{"FILE_WRITE", map[string]any{"path": f("u/config.toml"), "content": planted}},
		{"FILE_STAT", map[string]any{"path": f("t")}},
		{"FILE_LIST", map[string]any{"path": f("u")}},
		{"FILE_DELETE", map[string]any{"path": f("v/state"), "recursive": true}},
		{"OPERATION_CALL", map[string]any{"op": "create_directory", "args": map[string]any{"path": "u/x"}}},
		{"OPERATION_CALL", map[string]any{"op": "edit_file", "args": map[string]any{"path": "u/config.toml",
			"edits": []map[string]any{{"old_text": "[policy]", "new_text": "[commands]\nenabled = true\n[policy]"}}}}},
	} {
		typ, got := call(t, data, c.typ, c.payload)
		want(t, fmt.Sprint(c.typ, " ", c.payload), typ, got, "ERROR", "PATH_OUTSIDE_ALLOWED_ROOT")
	}
	typ, got := call(t, data, "EXECUTE_COMMAND", map[string]any{"argv": []string{"true"}})
	want(t, "command while commands are off", typ, got, "ERROR", "CAPABILITY_NOT_GRANTED")

	// After a restart the configuration is the user's: commands stay off.
	stop(t, cmd)
	_, data = session("sess-2")
	typ, got = call(t, data, "EXECUTE_COMMAND", map[string]any{"argv": []string{"true"}})
	want(t, "command after a restart", typ, got, "ERROR", "CAPABILITY_NOT_GRANTED")
	if b, _ := os.ReadFile(cfgFile); string(b) != allowPolicy {
		t.Errorf("config.toml changed:\n%s", b)
	}
	if b, _ := os.ReadFile(filepath.Join(hl, "state", "http.token")); string(b) != string(token) {
		t.Error("the token changed")
	}
}
