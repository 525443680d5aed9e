//go:build linux

package main

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/conformance"
	"github.com/hostlink/hostlink/internal/desktop/xvfbtest"
	"github.com/hostlink/hostlink/internal/devplatform"
	"github.com/hostlink/hostlink/internal/tstest"
)

// TestUpstreamPlatformComputerUse: the upstream platform sends every
// computer-use message to hostlink on a real X server; every reply is
// upstream's, or differs only as the table says.
func TestUpstreamPlatformComputerUse(t *testing.T) {
	t.Parallel()
	x := xvfbtest.Start(t, 1024, 768)
	bin := build(t)
	// One request at a time: each reply frees the last slot, so STATUS
	// follows it.
	p := startPlatform(t, devplatform.Config{Deny: hostlinkAdditions, MaxConcurrent: 1})
	_, env := linkEnv(t, p)
	env = append(env, x.Env()...)
	cfg := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(cfg, []byte("[computer]\nenabled = true\nclipboard = true\n"+allowPolicy), 0o600)
	dataHome := t.TempDir()
	os.MkdirAll(filepath.Join(dataHome, "applications"), 0o755)
	os.WriteFile(filepath.Join(dataHome, "applications", "hostlink-test-term.desktop"), []byte(
		"[Desktop Entry]\nType=Application\nName=Test Terminal\nExec=xterm -T launched-upstream -geometry 40x10+600+400\nStartupWMClass=XTerm\n"), 0o644)
	env = append(env, "XDG_DATA_HOME="+dataHome, "XDG_DATA_DIRS="+filepath.Join(dataHome, "none"))
	since := time.Now()
	startLinked(t, bin, env, p, "--config", cfg, "--allowed-root", t.TempDir(), "--platform-session", "cu")
	data := waitPeer(t, p, "cu", since)
	u := &upstreamEnv{t: t, p: p, conf: conformance.Load(t, filepath.Join("..", "..", "docs", "PROTOCOL.md"))}
	u.checkPeer(data)
	x.Xterm("upstream-one", 40, 60, t.TempDir())

	typ, got := u.call(data, "DISPLAY_INFO_REQUEST", map[string]any{})
	want(t, "display info", typ, got, "DISPLAY_INFO_RESPONSE")
	typ, got = u.call(data, "SCREENSHOT_REQUEST", map[string]any{"monitor": 0, "quality": 60, "format": "jpeg", "region": []int{0, 0, 100, 100}})
	want(t, "screenshot", typ, got, "SCREENSHOT_RESPONSE")
	typ, got = u.call(data, "INPUT_ACTION", map[string]any{"action": "mouse_move", "coordinate": []int{10, 10}})
	want(t, "mouse_move", typ, got, "ACK")
	typ, got = u.call(data, "INPUT_ACTION", map[string]any{"action": "left_click", "coordinate": []int{5000, 10}})
	want(t, "out of bounds", typ, got, "ERROR", "INPUT_OUT_OF_BOUNDS")
	typ, got = u.call(data, "CURSOR_POSITION_REQUEST", map[string]any{})
	want(t, "cursor", typ, got, "CURSOR_POSITION_RESPONSE")
	var win string
	tstest.WaitFor(t, 20*time.Second, "the xterm in WINDOW_LIST_RESPONSE", func() bool {
		typ, got = u.call(data, "WINDOW_LIST_REQUEST", map[string]any{})
		want(t, "windows", typ, got, "WINDOW_LIST_RESPONSE")
		for _, w := range got["windows"].([]any) {
			if m := w.(map[string]any); m["title"] == "upstream-one" {
				win = m["window_id"].(string)
			}
		}
		return win != ""
	})
	typ, got = u.call(data, "WINDOW_FOCUS", map[string]any{"window_id": win})
	want(t, "focus", typ, got, "ACK")
	typ, got = u.call(data, "WINDOW_FOCUS", map[string]any{"window_id": "win_00000000-0000-4000-8000-000000000000"})
	want(t, "a stale window", typ, got, "ERROR", "WINDOW_STALE")
	typ, got = u.call(data, "APP_LIST_REQUEST", map[string]any{})
	want(t, "apps", typ, got, "APP_LIST_RESPONSE")
	typ, got = u.call(data, "APP_LAUNCH", map[string]any{"bundle_id": "hostlink-test-term.desktop", "activate": false})
	want(t, "launch", typ, got, "ACK")
	typ, got = u.call(data, "APP_LAUNCH", map[string]any{"bundle_id": "no-such-app.desktop"})
	want(t, "an app that is not installed", typ, got, "ERROR", "FEATURE_NOT_SUPPORTED")
	typ, got = u.call(data, "CLIPBOARD_WRITE", map[string]any{"format": "text", "content": "from upstream"})
	want(t, "clipboard write", typ, got, "ACK")
	typ, got = u.call(data, "CLIPBOARD_READ", map[string]any{"format": "text"})
	want(t, "clipboard read", typ, got, "CLIPBOARD_READ_RESPONSE")
	typ, got = u.call(data, "PERMISSIONS_CHECK_REQUEST", map[string]any{"permissions": []string{"accessibility", "screen_recording"}})
	want(t, "permissions", typ, got, "PERMISSIONS_CHECK_RESPONSE")
	u.checkPeer(data)
	u.sentEvery("computer_use")
	if unseen := u.conf.Unseen(conformance.Computer); len(unseen) > 0 {
		t.Errorf("computer-use rows of the differences table nothing here observed: %v", unseen)
	}
}
