//go:build linux

package main

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"image/jpeg"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/desktop/xvfbtest"
	"github.com/hostlink/hostlink/internal/devplatform"
)

// The protocol's computer-use messages, on a real X server.
func TestLinkComputerUse(t *testing.T) {
	t.Parallel()
	x := xvfbtest.Start(t, 1024, 768)
	bin := build(t)
	p := startPlatform(t, devplatform.Config{})
	_, env := linkEnv(t, p)
	env = append(env, x.Env()...)
	cfg := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(cfg, []byte("[computer]\nenabled = true\nclipboard = true\n"+allowPolicy), 0o600)
	// An installed application for APP_LAUNCH: a desktop entry in the
	// XDG data home hostlink reads.
	dataHome := t.TempDir()
	os.MkdirAll(filepath.Join(dataHome, "applications"), 0o755)
	os.WriteFile(filepath.Join(dataHome, "applications", "hostlink-test-term.desktop"), []byte(
		"[Desktop Entry]\nType=Application\nName=Test Terminal\nExec=xterm -T launched-by-hostlink -geometry 40x10+600+400\nStartupWMClass=XTerm\n"), 0o644)
	env = append(env, "XDG_DATA_HOME="+dataHome, "XDG_DATA_DIRS="+filepath.Join(dataHome, "none"))
	root := t.TempDir()
	since := time.Now()
	startLinked(t, bin, env, p, "--config", cfg, "--allowed-root", root, "--platform-session", "cu")
	data := waitPeer(t, p, "cu", since)
	h := data.Hello
	if !slices.Contains(h.Capabilities, "computer_use") || h.ScreenResolution == nil || *h.ScreenResolution != [2]int{1024, 768} {
		t.Fatalf("HELLO with a display: %v %v", h.Capabilities, h.ScreenResolution)
	}
	for _, f := range []string{"screenshot.window", "input.mouse.down_up", "input.key.hold", "window.list", "window.focus",
		"app.list", "app.launch", "clipboard.read", "clipboard.write", "permissions.check"} {
		if !slices.Contains(h.ComputerUseFeatures, f) {
			t.Errorf("HELLO computer_use_features lacks %s: %v", f, h.ComputerUseFeatures)
		}
	}
	if !slices.Equal(h.ComputerUseFeaturesCoarse, []string{"screenshot", "input", "windows", "apps", "clipboard", "permissions"}) {
		t.Errorf("HELLO computer_use_features_coarse: %v", h.ComputerUseFeaturesCoarse)
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
	details, _ := json.Marshal(got["details"])
	if string(details) != `{"displays":[{"index":0,"origin":[0,0],"size":[1024,768]}],"requested_coordinate":[5000,10]}` {
		t.Errorf("INPUT_OUT_OF_BOUNDS details: %s", details)
	}
	typ, got = call(t, data, "INPUT_ACTION", map[string]any{"action": "hold_key", "key": "a"})
	want(t, "hold_key without duration", typ, got, "ERROR", "INVALID_ARGUMENT")
	typ, got = call(t, data, "INPUT_ACTION", map[string]any{"action": "wait", "duration_ms": 10})
	want(t, "wait", typ, got, "ACK")

	data = linkWindows(t, x, p, data)
	linkLowLevelInput(t, x, data)
	linkClipboard(t, x, data)
	linkApps(t, x, data)
}

// windowsByTitle lists the windows over the link.
func windowsByTitle(t *testing.T, data *devplatform.Peer) map[string]map[string]any {
	t.Helper()
	typ, got := call(t, data, "WINDOW_LIST_REQUEST", map[string]any{})
	want(t, "window list", typ, got, "WINDOW_LIST_RESPONSE")
	out := map[string]map[string]any{}
	for _, w := range got["windows"].([]any) {
		m := w.(map[string]any)
		out[m["title"].(string)] = m
	}
	return out
}

func xdo(t *testing.T, x *xvfbtest.Display, args ...string) string {
	t.Helper()
	return strings.TrimSpace(x.Run("xdotool", args...))
}

// WINDOW_LIST, WINDOW_FOCUS, SCREENSHOT_REQUEST.window_id and WINDOW_STALE,
// checked with xdotool and xwd. It returns the data connection, which it
// drops once to show that window ids do not outlive it.
func linkWindows(t *testing.T, x *xvfbtest.Display, p *platform, data *devplatform.Peer) *devplatform.Peer {
	dir := t.TempDir()
	one := x.Xterm("cu-one", 40, 60, dir)
	two := x.Xterm("cu-two", 420, 300, dir)
	ws := windowsByTitle(t, data)
	w1, w2 := ws["cu-one"], ws["cu-two"]
	if w1 == nil || w2 == nil {
		t.Fatalf("WINDOW_LIST_RESPONSE lacks the xterms: %v", ws)
	}
	geo := func(id string) [4]int {
		var r [4]int
		out := x.Run("xwininfo", "-id", id)
		for _, l := range strings.Split(out, "\n") {
			f := strings.Fields(l)
			switch {
			case strings.HasPrefix(strings.TrimSpace(l), "Absolute upper-left X:"):
				r[0], _ = strconv.Atoi(f[len(f)-1])
			case strings.HasPrefix(strings.TrimSpace(l), "Absolute upper-left Y:"):
				r[1], _ = strconv.Atoi(f[len(f)-1])
			case strings.HasPrefix(strings.TrimSpace(l), "Width:"):
				r[2], _ = strconv.Atoi(f[len(f)-1])
			case strings.HasPrefix(strings.TrimSpace(l), "Height:"):
				r[3], _ = strconv.Atoi(f[len(f)-1])
			}
		}
		return [4]int{r[0], r[1], r[0] + r[2], r[1] + r[3]}
	}
	b1 := w1["bounds"].([]any)
	if g := geo(one); [4]int{int(b1[0].(float64)), int(b1[1].(float64)), int(b1[2].(float64)), int(b1[3].(float64))} != g {
		t.Errorf("cu-one bounds %v, xwininfo says %v", b1, g)
	}
	if w2["is_focused"] != true || w1["is_focused"] != false || w1["app_name"] != "XTerm" || w1["pid"].(float64) <= 0 {
		t.Errorf("window entries: %v %v", w1, w2)
	}

	typ, got := call(t, data, "WINDOW_FOCUS", map[string]any{"window_id": w1["window_id"], "raise": true})
	want(t, "focus", typ, got, "ACK")
	if active := xdo(t, x, "getactivewindow"); active != one {
		t.Errorf("after WINDOW_FOCUS the active window is %s, want cu-one %s", active, one)
	}

	// The window's screenshot is the window's pixels as xwd sees them.
	ref := x.Still(func() {
		typ, got = call(t, data, "SCREENSHOT_REQUEST", map[string]any{"window_id": w1["window_id"], "format": "png", "include_cursor": false})
	})
	want(t, "window screenshot", typ, got, "SCREENSHOT_RESPONSE")
	raw, _ := base64.StdEncoding.DecodeString(got["image_base64"].(string))
	img, err := png.Decode(bytes.NewReader(raw))
	g := geo(one)
	if err != nil || img.Bounds().Dx() != g[2]-g[0] || img.Bounds().Dy() != g[3]-g[1] {
		t.Fatalf("window screenshot: %v %v, window %v", err, img.Bounds(), g)
	}
	diff := 0
	for y := range g[3] - g[1] {
		for xx := range g[2] - g[0] {
			r1, g1, b1, _ := img.At(xx, y).RGBA()
			r2, g2, b2, _ := ref.At(g[0]+xx, g[1]+y).RGBA()
			if r1 != r2 || g1 != g2 || b1 != b2 {
				diff++
			}
		}
	}
	if diff > (g[2]-g[0])*(g[3]-g[1])/100 {
		t.Errorf("window screenshot differs from xwd in %d pixels", diff)
	}

	// A destroyed window's id is stale for every use.
	x.Run("xdotool", "windowkill", two)
	x.Eventually("cu-two gone", func() bool {
		out, _ := x.Output("xdotool", "search", "--name", "^cu-two$")
		return strings.TrimSpace(out) == ""
	})
	typ, got = call(t, data, "WINDOW_FOCUS", map[string]any{"window_id": w2["window_id"]})
	want(t, "focus destroyed", typ, got, "ERROR", "WINDOW_STALE")
	typ, got = call(t, data, "SCREENSHOT_REQUEST", map[string]any{"window_id": w2["window_id"]})
	want(t, "screenshot destroyed", typ, got, "ERROR", "WINDOW_STALE")
	typ, got = call(t, data, "WINDOW_FOCUS", map[string]any{"window_id": "win_0123456789abcdef01234567"})
	want(t, "focus forged", typ, got, "ERROR", "WINDOW_STALE")

	// A new connection (a new HELLO) wipes the ids.
	dropped := time.Now()
	data.Close(1011, "forced")
	data = waitPeer(t, p, "cu", dropped)
	typ, got = call(t, data, "WINDOW_FOCUS", map[string]any{"window_id": w1["window_id"]})
	want(t, "focus with an id of the previous connection", typ, got, "ERROR", "WINDOW_STALE")
	if fresh := windowsByTitle(t, data)["cu-one"]; fresh == nil {
		t.Fatal("cu-one not listed after the reconnect")
	} else {
		typ, got = call(t, data, "WINDOW_FOCUS", map[string]any{"window_id": fresh["window_id"]})
		want(t, "focus after re-listing", typ, got, "ACK")
	}
	return data
}

// mouse_down, mouse_move and mouse_up drag a window by its title bar;
// hold_key holds a key long enough for the X server's autorepeat.
func linkLowLevelInput(t *testing.T, x *xvfbtest.Display, data *devplatform.Peer) {
	dir := t.TempDir()
	id := x.Xterm("cu-drag", 100, 100, dir)
	w := windowsByTitle(t, data)["cu-drag"]
	b := w["bounds"].([]any)
	x0, y0 := int(b[0].(float64)), int(b[1].(float64))
	// openbox's title bar is the 20 pixels above the client.
	grab := []int{x0 + 60, y0 - 10}
	typ, got := call(t, data, "INPUT_ACTION", map[string]any{"action": "mouse_down", "coordinate": grab, "button": "left"})
	want(t, "mouse_down", typ, got, "ACK")
	for _, step := range [][]int{{grab[0] + 40, grab[1] + 30}, {grab[0] + 120, grab[1] + 90}} {
		typ, got = call(t, data, "INPUT_ACTION", map[string]any{"action": "mouse_move", "coordinate": step})
		want(t, "mouse_move held", typ, got, "ACK")
	}
	if loc := xdo(t, x, "getmouselocation"); !strings.HasPrefix(loc, fmt.Sprintf("x:%d y:%d ", grab[0]+120, grab[1]+90)) {
		t.Errorf("pointer during the drag: %s", loc)
	}
	typ, got = call(t, data, "INPUT_ACTION", map[string]any{"action": "mouse_up", "coordinate": []int{grab[0] + 120, grab[1] + 90}})
	want(t, "mouse_up", typ, got, "ACK")
	x.Eventually("the window dragged by (120, 90)", func() bool {
		out, _ := x.Output("xwininfo", "-id", id)
		return strings.Contains(out, fmt.Sprintf("Absolute upper-left X:  %d\n", x0+120)) &&
			strings.Contains(out, fmt.Sprintf("Absolute upper-left Y:  %d\n", y0+90))
	})

	// hold_key: "a" held 1.2 s in a terminal running cat > held.txt.
	typ, got = call(t, data, "INPUT_ACTION", map[string]any{"action": "type", "text": "cat > held.txt\n"})
	want(t, "type cat", typ, got, "ACK")
	x.Eventually("cat to start", func() bool {
		_, err := os.Stat(filepath.Join(dir, "held.txt"))
		return err == nil
	})
	typ, got = call(t, data, "INPUT_ACTION", map[string]any{"action": "hold_key", "key": "a", "duration_ms": 1200})
	want(t, "hold_key", typ, got, "ACK")
	for _, k := range []string{"enter", "ctrl+d"} {
		typ, got = call(t, data, "INPUT_ACTION", map[string]any{"action": "key", "key": k})
		want(t, k, typ, got, "ACK")
	}
	var held []byte
	x.Eventually("held.txt written", func() bool {
		held, _ = os.ReadFile(filepath.Join(dir, "held.txt"))
		return bytes.HasSuffix(held, []byte("\n"))
	})
	if n := bytes.Count(held, []byte("a")); n < 3 || len(bytes.Trim(held, "a\n")) != 0 {
		t.Errorf("hold_key a for 1.2 s typed %q; want autorepeat", held)
	}
	typ, got = call(t, data, "INPUT_ACTION", map[string]any{"action": "mouse_down"})
	want(t, "mouse_down without coordinate", typ, got, "ERROR", "INVALID_ARGUMENT")
}

// CLIPBOARD_WRITE and CLIPBOARD_READ (writeback-only) against xclip.
func linkClipboard(t *testing.T, x *xvfbtest.Display, data *devplatform.Peer) {
	xvfbtest.Need(t, "xclip")
	typ, got := call(t, data, "CLIPBOARD_READ", map[string]any{"format": "text"})
	want(t, "read before any write", typ, got, "ERROR", "CLIPBOARD_CONCEALED")
	const text = "copied by hostlink: ✓ 123"
	typ, got = call(t, data, "CLIPBOARD_WRITE", map[string]any{"format": "text", "content": text})
	want(t, "clipboard write", typ, got, "ACK")
	if out := x.Run("xclip", "-o", "-selection", "clipboard"); out != text {
		t.Errorf("xclip reads %q after CLIPBOARD_WRITE", out)
	}
	typ, got = call(t, data, "CLIPBOARD_READ", map[string]any{"format": "text"})
	want(t, "clipboard read back", typ, got, "CLIPBOARD_READ_RESPONSE")
	if got["content"] != text || got["size_bytes"] != float64(len(text)) {
		t.Errorf("CLIPBOARD_READ_RESPONSE: %v", got)
	}
	typ, got = call(t, data, "CLIPBOARD_WRITE", map[string]any{"content": strings.Repeat("x", 200<<10)})
	want(t, "clipboard write too large", typ, got, "ERROR", "FILE_TOO_LARGE")

	// Someone else copies: the writeback-only read conceals it.
	cmd := exec.Command("xclip", "-quiet", "-i", "-selection", "clipboard")
	cmd.Env = x.Env()
	cmd.Stdin = strings.NewReader("the user's secret")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { cmd.Process.Kill(); cmd.Wait() })
	x.Eventually("xclip to own the clipboard", func() bool {
		out, _ := x.Output("xclip", "-o", "-selection", "clipboard")
		return out == "the user's secret"
	})
	typ, got = call(t, data, "CLIPBOARD_READ", map[string]any{"format": "text"})
	want(t, "foreign clipboard", typ, got, "ERROR", "CLIPBOARD_CONCEALED")
	if d, _ := got["details"].(map[string]any); d["reason"] != "writeback_overwritten" {
		t.Errorf("concealed details: %v", got)
	}
}

// APP_LIST, APP_LAUNCH of an installed desktop entry, PERMISSIONS_CHECK.
func linkApps(t *testing.T, x *xvfbtest.Display, data *devplatform.Peer) {
	typ, got := call(t, data, "APP_LIST_REQUEST", map[string]any{"include_background": false})
	want(t, "app list", typ, got, "APP_LIST_RESPONSE")
	xterms := 0
	for _, a := range got["apps"].([]any) {
		m := a.(map[string]any)
		if m["bundle_id"] == "hostlink-test-term" && m["window_count"] == 1.0 && strings.HasSuffix(fmt.Sprint(m["executable_path"]), "xterm") {
			xterms++
		}
	}
	if xterms < 2 {
		t.Errorf("APP_LIST_RESPONSE lacks the running xterms: %v", got)
	}

	typ, got = call(t, data, "APP_LAUNCH", map[string]any{"bundle_id": "hostlink-test-term", "args": []string{}, "activate": true})
	want(t, "app launch", typ, got, "ACK")
	pid := int(got["pid"].(float64))
	var win string
	x.Eventually("the launched xterm's window", func() bool {
		out, _ := x.Output("xdotool", "search", "--name", "^launched-by-hostlink$")
		win = strings.TrimSpace(out)
		return win != ""
	})
	if p := xdo(t, x, "getwindowpid", win); p != strconv.Itoa(pid) {
		t.Errorf("launched window's pid %s, APP_LAUNCH said %d", p, pid)
	}
	typ, got = call(t, data, "APP_LAUNCH", map[string]any{"executable_path": "/bin/sh", "args": []string{"-c", "true"}})
	want(t, "launch a program that is no installed app", typ, got, "ERROR", "APP_NOT_FOUND")
	typ, got = call(t, data, "APP_LAUNCH", map[string]any{"bundle_id": "hostlink-test-term", "args": []string{"/etc/passwd"}})
	want(t, "args the entry does not take", typ, got, "ERROR", "INVALID_ARGUMENT")

	typ, got = call(t, data, "PERMISSIONS_CHECK_REQUEST", map[string]any{"permissions": []string{"screen_recording", "accessibility", "camera"}})
	want(t, "permissions", typ, got, "PERMISSIONS_CHECK_RESPONSE")
	perms, _ := json.Marshal(got["permissions"])
	if string(perms) != `{"accessibility":"not_applicable","camera":"unknown","screen_recording":"not_applicable"}` {
		t.Errorf("PERMISSIONS_CHECK_RESPONSE: %s", perms)
	}
}
