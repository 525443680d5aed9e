//go:build linux

package main

import (
	"bytes"
	"encoding/base64"
	"image/jpeg"
	"image/png"
	"os"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/desktop/xvfbtest"
	"github.com/hostlink/hostlink/internal/devplatform"
)

// The protocol's computer-use messages, on a real X server.
func TestLinkComputerUse(t *testing.T) {
	x := xvfbtest.Start(t, 1024, 768)
	bin := build(t)
	p := startPlatform(t, devplatform.Config{})
	_, env := linkEnv(t, p)
	env = append(env, x.Env()...)
	cfg := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(cfg, []byte("[computer]\nenabled = true\n"), 0o600)
	root := t.TempDir()
	since := time.Now()
	startLinked(t, bin, env, p, "--config", cfg, "--allowed-root", root, "--platform-session", "cu")
	data := waitPeer(t, p, "cu", since)
	h := data.Hello
	if !slices.Contains(h.Capabilities, "computer_use") || h.ScreenResolution == nil || *h.ScreenResolution != [2]int{1024, 768} {
		t.Fatalf("HELLO with a display: %v %v", h.Capabilities, h.ScreenResolution)
	}

	typ, got := call(t, data, "DISPLAY_INFO_REQUEST", map[string]any{})
	want(t, "display info", typ, got, "DISPLAY_INFO_RESPONSE")
	mons := got["monitors"].([]any)
	if len(mons) != 1 || mons[0].(map[string]any)["logical_size"].([]any)[0] != 1024.0 {
		t.Fatalf("DISPLAY_INFO_RESPONSE: %v", got)
	}

	typ, got = call(t, data, "SCREENSHOT_REQUEST", map[string]any{"monitor": 0, "quality": 60, "format": "jpeg"})
	want(t, "screenshot", typ, got, "SCREENSHOT_RESPONSE")
	raw, _ := base64.StdEncoding.DecodeString(got["image_base64"].(string))
	img, err := jpeg.Decode(bytes.NewReader(raw))
	if err != nil || img.Bounds().Dx() != 1024 || img.Bounds().Dy() != 768 || got["mime_type"] != "image/jpeg" {
		t.Fatalf("screenshot: %v %v %v", err, got["width"], got["mime_type"])
	}
	typ, got = call(t, data, "SCREENSHOT_REQUEST", map[string]any{"monitor": 0, "format": "png", "region": []int{100, 50, 300, 150}})
	want(t, "region", typ, got, "SCREENSHOT_RESPONSE")
	raw, _ = base64.StdEncoding.DecodeString(got["image_base64"].(string))
	if img, err := png.Decode(bytes.NewReader(raw)); err != nil || img.Bounds().Dx() != 200 || img.Bounds().Dy() != 100 {
		t.Fatalf("region screenshot: %v %v", err, got["width"])
	}

	typ, got = call(t, data, "INPUT_ACTION", map[string]any{"action": "mouse_move", "coordinate": []int{321, 123}})
	want(t, "mouse_move", typ, got, "ACK")
	typ, got = call(t, data, "CURSOR_POSITION_REQUEST", map[string]any{})
	want(t, "cursor", typ, got, "CURSOR_POSITION_RESPONSE")
	if got["x"] != 321.0 || got["y"] != 123.0 {
		t.Errorf("cursor after mouse_move: %v", got)
	}
	typ, got = call(t, data, "INPUT_ACTION", map[string]any{"action": "left_click", "coordinate": []int{5000, 10}})
	want(t, "out of bounds", typ, got, "ERROR", "INPUT_OUT_OF_BOUNDS")
	if got["details"] == nil {
		t.Errorf("INPUT_OUT_OF_BOUNDS without the display rects: %v", got)
	}
	typ, got = call(t, data, "INPUT_ACTION", map[string]any{"action": "hold_key", "key": "a"})
	want(t, "hold_key", typ, got, "ERROR", "FEATURE_NOT_SUPPORTED")
	typ, got = call(t, data, "CLIPBOARD_READ", map[string]any{})
	want(t, "clipboard", typ, got, "ERROR", "FEATURE_NOT_SUPPORTED")
	typ, got = call(t, data, "INPUT_ACTION", map[string]any{"action": "wait", "duration_ms": 10})
	want(t, "wait", typ, got, "ACK")
}
