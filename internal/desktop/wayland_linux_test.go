package desktop

import (
	"context"
	"encoding/json"
	"image"
	"image/draw"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/desktop/native"
	"github.com/hostlink/hostlink/internal/desktop/wayland"
	"github.com/hostlink/hostlink/internal/desktop/waylandtest"
	"github.com/hostlink/hostlink/internal/desktopapi"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/mcpserve"
	"github.com/hostlink/hostlink/internal/tstest"
)

// wenv is a Service on a private headless GNOME Wayland session, reached
// through hostlink's MCP server by the Go SDK's client.
type wenv struct {
	t   *testing.T
	s   *waylandtest.Session
	svc *Service
	cs  *mcp.ClientSession
}

func newWaylandEnv(t *testing.T, o waylandtest.Options) *wenv {
	t.Helper()
	return newWaylandEnvWith(t, o, nil)
}

// newWaylandEnvWith is newWaylandEnv with the backend's configuration
// changed by config.
func newWaylandEnvWith(t *testing.T, o waylandtest.Options, config func(*wayland.Config)) *wenv {
	t.Helper()
	s := waylandtest.Start(t, o)
	e := &wenv{t: t, s: s}
	e.svc = New(Options{Open: openWaylandWith(s, config), Settle: 300 * time.Millisecond})
	t.Cleanup(func() { e.svc.Close() })
	reg := auditedRegistry(t, t.TempDir())
	Register(reg, e.svc)
	ctx := context.Background()
	ct, st := mcp.NewInMemoryTransports()
	ss, err := mcpserve.NewServer(reg, audit.MCPStdio, "test").Connect(ctx, st, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ss.Close() })
	e.cs, err = mcp.NewClient(&mcp.Implementation{Name: "test", Version: "0"}, nil).Connect(ctx, ct, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { e.cs.Close() })
	return e
}

// openWaylandWith opens the test session's desktop as openPlatform would
// open the user's, from the session's variables, with the configuration
// changed by config.
func openWaylandWith(s *waylandtest.Session, config func(*wayland.Config)) Opener {
	return func(ctx context.Context) ([]native.Backend, native.Readiness) {
		cfg := wayland.Config{Display: s.Display, Bus: s.Bus, RuntimeDir: s.Runtime}
		if config != nil {
			config(&cfg)
		}
		b, err := wayland.Open(ctx, cfg)
		if err != nil {
			return nil, native.Readiness{Reason: "wayland_unreachable", Detail: err.Error()}
		}
		return []native.Backend{b}, native.Readiness{Ready: true}
	}
}

// call runs a tool over MCP and returns its JSON text, its image (if any)
// and its error code (if it failed).
func (e *wenv) call(tool string, args map[string]any) (string, []byte, *errcode.Error) {
	e.t.Helper()
	res, err := e.cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		e.t.Fatalf("%s: %v", tool, err)
	}
	text := res.Content[0].(*mcp.TextContent).Text
	if res.IsError {
		var body struct{ Error *errcode.Error }
		if err := json.Unmarshal([]byte(text), &body); err != nil || body.Error == nil {
			e.t.Fatalf("%s: error result %q", tool, text)
		}
		return text, nil, body.Error
	}
	var img []byte
	if len(res.Content) > 1 {
		im, ok := res.Content[1].(*mcp.ImageContent)
		if !ok {
			e.t.Fatalf("%s: content %T", tool, res.Content[1])
		}
		img = im.Data
	}
	return text, img, nil
}

func (e *wenv) desktops() desktopapi.Desktop {
	e.t.Helper()
	text, _, err := e.call("computer_desktops", nil)
	if err != nil {
		e.t.Fatalf("computer_desktops: %v", err)
	}
	var res desktopapi.DesktopsResult
	if err := json.Unmarshal([]byte(text), &res); err != nil || len(res.Desktops) != 1 {
		e.t.Fatalf("computer_desktops: %v %s", err, text)
	}
	return res.Desktops[0]
}

// observe returns the observation and its decoded PNG.
func (e *wenv) observe(args map[string]any) (*desktopapi.Observation, *image.RGBA) {
	e.t.Helper()
	text, png, err := e.call("computer_observe", args)
	if err != nil {
		e.t.Fatalf("computer_observe: %v", err)
	}
	var o desktopapi.Observation
	if err := json.Unmarshal([]byte(text), &o); err != nil || png == nil {
		e.t.Fatalf("computer_observe: %v %s", err, text)
	}
	return &o, decodePNG(e.t, png)
}

func (e *wenv) act(args map[string]any) (*desktopapi.ActResult, *image.RGBA) {
	e.t.Helper()
	text, png, err := e.call("computer_act", args)
	if err != nil {
		e.t.Fatalf("computer_act %v: %v", args, err)
	}
	var r desktopapi.ActResult
	if err := json.Unmarshal([]byte(text), &r); err != nil {
		e.t.Fatalf("computer_act: %v %s", err, text)
	}
	if r.Receipt.Status != desktopapi.Accepted {
		e.t.Fatalf("computer_act %v: receipt %+v", args, r.Receipt)
	}
	if r.Observation == nil || png == nil {
		e.t.Fatalf("computer_act %v: no fresh observation (%v)", args, r.ObservationError)
	}
	return &r, decodePNG(e.t, png)
}

// consent makes the first observation, which opens the portal's dialog
// and reports permission_pending, answers the dialog as the person would,
// and waits until the desktop reports the shared monitor.
func (e *wenv) consent(input bool) desktopapi.Desktop {
	e.t.Helper()
	if _, _, err := e.call("computer_observe", nil); err == nil || err.Code != PermissionPending || err.Details["reason"] != "permission_pending" {
		e.t.Fatalf("first observation: %v", err)
	}
	e.s.Allow(input)
	var d desktopapi.Desktop
	tstest.WaitFor(e.t, 2*time.Minute, "the shared monitor", func() bool {
		d = e.desktops()
		return len(d.Monitors) == 1
	})
	return d
}

// light counts the light grey (or white) pixels of img inside r: the
// terminal's text and its white background colour.
func light(img *image.RGBA, r image.Rectangle) int {
	n := 0
	for y := r.Min.Y; y < r.Max.Y; y++ {
		for x := r.Min.X; x < r.Max.X; x++ {
			if c := img.RGBAAt(x, y); c.R == c.G && c.G == c.B && c.R >= 160 {
				n++
			}
		}
	}
	return n
}

// TestWaylandOverMCP: discovery, consent, an observation whose pixels are
// the screen's (read independently through mutter), typing a command into
// a Wayland terminal and clicking, each shown by the next observation.
func TestWaylandOverMCP(t *testing.T) {
	e := newWaylandEnv(t, waylandtest.Options{})
	dir := t.TempDir()
	e.s.Terminal(dir)

	d := e.desktops()
	if d.ID != "wayland:"+e.s.Display || d.CoordinateSpace != "pixels" || len(d.Monitors) != 0 {
		t.Fatalf("desktop before consent %+v", d)
	}
	if op := d.Operations["computer_observe"]; !op.Ready || op.Detail == "" {
		t.Errorf("observe before consent: %+v", op)
	}
	for _, op := range []string{"windows", "focus"} {
		if r := d.Operations[op]; r.Ready || r.Reason != wayland.ReasonNoWindowList {
			t.Errorf("%s: %+v", op, r)
		}
	}
	if a := d.Operations["accessibility"]; !a.Ready {
		t.Errorf("accessibility on a session bus with AT-SPI: %+v", a)
	}

	d = e.consent(true)
	if m := d.Monitors[0]; m.Bounds != (native.Rect{W: e.s.W, H: e.s.H}) || m.Scale != 1 {
		t.Fatalf("shared monitor %+v", m)
	}
	for _, op := range []string{"computer_observe", "computer_act"} {
		if !d.Operations[op].Ready {
			t.Errorf("%s after consent: %+v", op, d.Operations[op])
		}
	}

	obs, img := e.observe(nil)
	ref := e.s.Capture()
	if img.Rect != ref.Rect || obs.Image.Width != e.s.W || len(obs.Windows) != 0 || obs.Cursor != nil {
		t.Fatalf("observation %+v, image %v, reference %v", obs.Image, img.Rect, ref.Rect)
	}
	waylandtest.Same(t, "the observation against the reference capture", img, ref, 0, 0)

	// Type a command: it writes a file and prints a bar 40 characters
	// wide in the terminal's white.
	term := image.Rect(114, 95, 1164, 657) // weston-terminal's text area
	before := light(img, term)
	cmd := `printf '\033[47m%40s\033[0m\n' '' > /dev/tty; echo typed > typed.txt` + "\n"
	res, after := e.act(map[string]any{"observation_id": obs.ObservationID, "action": "type", "text": cmd, "settle_ms": 500})
	if res.Receipt.Dispatched != 1 {
		t.Fatalf("type receipt %+v", res.Receipt)
	}
	tstest.WaitFor(t, 2*time.Minute, "typed.txt", func() bool {
		b, err := os.ReadFile(filepath.Join(dir, "typed.txt"))
		return err == nil && string(b) == "typed\n"
	})
	if got := light(after, term); got < before+40*8*15 {
		// The bar may have been drawn after the settle: observe again.
		o2, img2 := e.observe(nil)
		obs, after = o2, img2
		if got = light(after, term); got < before+40*8*15 {
			t.Fatalf("white pixels in the terminal: %d before, %d after", before, got)
		}
	} else {
		obs = res.Observation
	}

	// Click the terminal's maximize button: the window covers the
	// desktop afterwards.
	bg := after.RGBAAt(40, e.s.H-40)
	res, after = e.act(map[string]any{"observation_id": obs.ObservationID, "action": "click", "x": 1119, "y": 81, "settle_ms": 500})
	if res.Receipt.Dispatched != 3 {
		t.Fatalf("click receipt %+v", res.Receipt)
	}
	obs = res.Observation
	tstest.WaitFor(t, 2*time.Minute, "the maximized terminal", func() bool {
		if after.RGBAAt(40, e.s.H-40) != bg {
			return true
		}
		obs, after = e.observe(nil)
		return false
	})

	// Scroll in notches; a fraction of one, or a control character, is
	// refused before dispatch and keeps the reference.
	if _, _, err := e.call("computer_act", map[string]any{"observation_id": obs.ObservationID, "action": "scroll", "x": 600, "y": 400, "dy": 60}); err == nil ||
		err.Code != FeatureNotSupported {
		t.Fatalf("scroll of half a notch: %v", err)
	}
	if _, _, err := e.call("computer_act", map[string]any{"observation_id": obs.ObservationID, "action": "type", "text": "a\x02"}); err == nil ||
		err.Code != KeyUnmapped {
		t.Fatalf("control character: %v", err)
	}
	res, _ = e.act(map[string]any{"observation_id": obs.ObservationID, "action": "scroll", "x": 600, "y": 400, "dy": 240, "settle_ms": 0})
	if res.Receipt.Dispatched != 2 {
		t.Fatalf("scroll receipt %+v", res.Receipt)
	}
}

// TestWaylandResolutionChange: the compositor closes the portal session
// when the monitor changes; an act on an observation of that session is
// refused as drift, with nothing dispatched, and the next observation asks
// the person again.
func TestWaylandResolutionChange(t *testing.T) {
	e := newWaylandEnv(t, waylandtest.Options{})
	dir := t.TempDir()
	e.s.Terminal(dir)
	e.consent(true)
	obs, _ := e.observe(nil)
	e.s.Rotate()
	// The stream goes too, perhaps first: the session's close is what
	// readiness ends up reporting.
	tstest.WaitFor(t, 2*time.Minute, "the session's end to be reported", func() bool {
		return e.desktops().Operations["computer_act"].Reason == wayland.ReasonClosed
	})
	_, _, err := e.call("computer_act", map[string]any{"observation_id": obs.ObservationID, "action": "type", "text": "echo no > no.txt\n"})
	if err == nil || err.Code != DesktopDrift || err.Details["reason"] != wayland.ReasonClosed {
		t.Fatalf("act on the closed session: %v", err)
	}
	if r, _ := err.Details["receipt"].(map[string]any); r["status"] != desktopapi.NotDispatched {
		t.Fatalf("receipt of the refused act: %v", err.Details)
	}
	d := e.consent(true)
	if m := d.Monitors[0]; m.Bounds != (native.Rect{W: e.s.W, H: e.s.H}) {
		t.Fatalf("monitor after rotation %+v (want %dx%d)", m, e.s.W, e.s.H)
	}
	_, img := e.observe(nil)
	if img.Rect.Dx() != e.s.W || img.Rect.Dy() != e.s.H {
		t.Fatalf("image %v after rotation", img.Rect)
	}
	if _, err := os.Stat(filepath.Join(dir, "no.txt")); err == nil {
		t.Fatal("the refused act's input reached the terminal")
	}
	// AT-SPI on the Wayland session's bus: a native Wayland GTK window's
	// button is in the observation's accessibility text.
	e.s.GtkApp("wayland-a11y", "Press on Wayland")
	tstest.WaitFor(t, 2*time.Minute, "the GTK button in the accessibility text", func() bool {
		o, _ := e.observe(map[string]any{"accessibility": true})
		return o.Accessibility != nil && o.Accessibility.Available && strings.Contains(o.Accessibility.Text, "push button: Press on Wayland")
	})
}

// TestWaylandStreamLost: the shared stream's PipeWire node destroyed with
// no portal Closed signal. Readiness says so without an observation (the
// loss is seen as it happens, not after a capture times out), an act on an
// observation taken before is refused as drift with nothing dispatched,
// and the next observation opens a new session, asking the person again,
// whose frames are the screen's.
func TestWaylandStreamLost(t *testing.T) {
	e := newWaylandEnv(t, waylandtest.Options{})
	dir := t.TempDir()
	e.s.Terminal(dir)
	e.consent(true)
	obs, _ := e.observe(nil)
	e.s.DestroyStreams()
	tstest.WaitFor(t, time.Minute, "the lost stream in the desktop's readiness", func() bool {
		return e.desktops().Operations["computer_act"].Reason == wayland.ReasonStreamLost
	})
	if op := e.desktops().Operations["computer_act"]; op.Ready {
		t.Fatalf("act ready on a lost stream: %+v", op)
	}
	_, _, err := e.call("computer_act", map[string]any{"observation_id": obs.ObservationID, "action": "type", "text": "echo no > no.txt\n"})
	if err == nil || err.Code != DesktopDrift || err.Details["reason"] != wayland.ReasonStreamLost {
		t.Fatalf("act on the lost stream: %v", err)
	}
	if r, _ := err.Details["receipt"].(map[string]any); r["status"] != desktopapi.NotDispatched || r["dispatched"] != float64(0) {
		t.Fatalf("receipt of the refused act: %v", err.Details)
	}
	d := e.consent(true)
	if m := d.Monitors[0]; m.Bounds != (native.Rect{W: e.s.W, H: e.s.H}) {
		t.Fatalf("monitor of the new session %+v", m)
	}
	o2, img := e.observe(nil)
	if o2.ObservationID == obs.ObservationID {
		t.Fatal("the new session's observation reuses the old reference")
	}
	waylandtest.Same(t, "the new session's observation against the reference capture", img, e.s.Capture(), 0, 0)
	if _, _, err := e.call("computer_act", map[string]any{"observation_id": obs.ObservationID, "action": "type", "text": "echo no > no.txt\n"}); err == nil {
		t.Fatal("an observation of the lost session acted in the new one")
	}
	if _, err := os.Stat(filepath.Join(dir, "no.txt")); err == nil {
		t.Fatal("a refused act's input reached the terminal")
	}
}

// TestWaylandDialogUnanswered: while the portal's dialog is open every
// request reports permission_pending and no input is sent; a refusal is
// final for the daemon's life, with no second dialog.
func TestWaylandDialogUnanswered(t *testing.T) {
	e := newWaylandEnv(t, waylandtest.Options{})
	e.s.Terminal(t.TempDir())
	ref := e.s.Capture()
	if _, _, err := e.call("computer_observe", nil); err == nil || err.Code != PermissionPending {
		t.Fatalf("observation without consent: %v", err)
	}
	e.s.AwaitDialog()
	d := e.desktops()
	for _, op := range []string{"computer_observe", "computer_act"} {
		if r := d.Operations[op]; r.Ready || r.Reason != wayland.ReasonPending {
			t.Errorf("%s with the dialog open: %+v", op, r)
		}
	}
	if _, _, err := e.call("computer_observe", nil); err == nil || err.Details["reason"] != wayland.ReasonPending {
		t.Fatalf("second observation: %v", err)
	}
	// The link's path: input with the dialog open is refused unsent.
	err := e.svc.Do(context.Background(), "", func(b native.Backend) error {
		_, err := b.Dispatch(context.Background(), []native.Step{{Kind: native.Text, Text: "x"}})
		return err
	})
	if e := errcode.As(err); e == nil || e.Code != PermissionPending {
		t.Fatalf("link input with the dialog open: %v", err)
	}
	e.s.Decline()
	if n := waylandtest.Differ(e.s.Capture(), ref, 0, 0); n != 0 {
		t.Fatalf("%d pixels changed: input reached the desktop", n)
	}
	tstest.WaitFor(t, 2*time.Minute, "the refusal", func() bool {
		return e.desktops().Operations["computer_observe"].Reason == wayland.ReasonDenied
	})
	if _, _, err := e.call("computer_observe", nil); err == nil || err.Details["reason"] != wayland.ReasonDenied {
		t.Fatalf("observation after the refusal: %v", err)
	}
	if e.s.DialogShown() {
		t.Fatal("a second dialog after the refusal")
	}
}

// TestWaylandMissingDependencies: a session without the portal, and one
// whose GStreamer lacks pipewiresrc or is not installed, report the right
// reasons per capability, and requests fail with them.
func TestWaylandMissingDependencies(t *testing.T) {
	t.Run("no portal", func(t *testing.T) {
		e := newWaylandEnv(t, waylandtest.Options{NoPortal: true})
		d := e.desktops()
		for _, op := range []string{"computer_observe", "computer_act"} {
			if r := d.Operations[op]; r.Ready || r.Reason != wayland.ReasonPortalMissing {
				t.Errorf("%s: %+v", op, r)
			}
		}
		if _, _, err := e.call("computer_observe", nil); err == nil || err.Code != DesktopUnavailable || err.Details["reason"] != wayland.ReasonPortalMissing {
			t.Fatalf("observe: %v", err)
		}
	})
	gst := func(t *testing.T, inspect string) {
		// A PATH with pw-dump and, if inspect is set, a gst-inspect-1.0
		// whose GStreamer finds no plugins.
		bin := t.TempDir()
		for _, p := range []string{"pw-dump", "gst-launch-1.0"} {
			if inspect == "" && p == "gst-launch-1.0" {
				continue
			}
			path := tstest.Tool(t, p)
			if err := os.Symlink(path, filepath.Join(bin, p)); err != nil {
				t.Fatal(err)
			}
		}
		if inspect != "" {
			script := "#!/bin/sh\nGST_PLUGIN_SYSTEM_PATH_1_0=" + t.TempDir() + " GST_REGISTRY_1_0=" + filepath.Join(t.TempDir(), "registry.bin") +
				" exec " + tstest.Tool(t, "gst-inspect-1.0") + " \"$@\"\n"
			if err := os.WriteFile(filepath.Join(bin, "gst-inspect-1.0"), []byte(script), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		t.Setenv("PATH", bin)
	}
	for _, tt := range []struct {
		name, inspect, reason string
	}{
		{"no gstreamer", "", wayland.ReasonGstMissing},
		{"no pipewiresrc", "empty", wayland.ReasonPipewiresrc},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e := newWaylandEnv(t, waylandtest.Options{})
			gst(t, tt.inspect)
			d := e.desktops()
			for _, op := range []string{"computer_observe", "computer_act"} {
				if r := d.Operations[op]; r.Ready || r.Reason != tt.reason {
					t.Errorf("%s: %+v", op, r)
				}
			}
			if _, _, err := e.call("computer_observe", nil); err == nil || err.Details["reason"] != tt.reason {
				t.Fatalf("observe: %v", err)
			}
			if e.s.DialogShown() {
				t.Fatal("a consent dialog without the means to capture")
			}
		})
	}
}

// TestWaylandObserveOnly: a portal without RemoteDesktop gives observe
// without act. Its ScreenCast (version 4) offers a restore token, which
// reopens the session after the compositor closed it without a second
// dialog.
func TestWaylandObserveOnly(t *testing.T) {
	e := newWaylandEnv(t, waylandtest.Options{NoRemoteDesktop: true})
	d := e.desktops()
	if r := d.Operations["computer_observe"]; !r.Ready {
		t.Fatalf("observe: %+v", r)
	}
	if r := d.Operations["computer_act"]; r.Ready || r.Reason != wayland.ReasonRemoteMissing {
		t.Fatalf("act: %+v", r)
	}
	if _, _, err := e.call("computer_observe", nil); err == nil || err.Details["reason"] != wayland.ReasonPending {
		t.Fatalf("first observation: %v", err)
	}
	e.s.AllowCast()
	tstest.WaitFor(t, 2*time.Minute, "the shared monitor", func() bool { return len(e.desktops().Monitors) == 1 })
	obs, img := e.observe(nil)
	waylandtest.Same(t, "the observation against the reference capture", img, e.s.Capture(), 0, 0)
	_, _, err := e.call("computer_act", map[string]any{"observation_id": obs.ObservationID, "action": "move", "x": 10, "y": 10})
	if err == nil || err.Code != FeatureNotSupported || err.Details["reason"] != wayland.ReasonRemoteMissing {
		t.Fatalf("act without RemoteDesktop: %v", err)
	}
	// The compositor closes the session; the next observation reopens it
	// with the restore token: no dialog, no permission_pending.
	e.s.Rotate()
	tstest.WaitFor(t, 2*time.Minute, "the session's end to be reported", func() bool {
		return e.desktops().Operations["computer_observe"].Detail != "the person shares one monitor through the portal"
	})
	_, img = e.observe(nil)
	if img.Rect.Dx() != e.s.W || img.Rect.Dy() != e.s.H {
		t.Fatalf("image %v after rotation, want %dx%d", img.Rect, e.s.W, e.s.H)
	}
}

// TestWaylandScreenshotOnly: where the portal has Screenshot but no screen
// cast (gnome-shell, whose Screenshot portal works, with ScreenCast and
// RemoteDesktop left out), observations are screenshots of the whole
// desktop, after the person allows them; acts are refused; no screenshot
// file is left behind.
func TestWaylandScreenshotOnly(t *testing.T) {
	e := newWaylandEnv(t, waylandtest.Options{ScreenshotOnly: true})
	d := e.desktops()
	if r := d.Operations["computer_observe"]; !r.Ready || !strings.Contains(r.Detail, "screenshots only") {
		t.Fatalf("observe: %+v", r)
	}
	if r := d.Operations["computer_act"]; r.Ready || r.Reason != wayland.ReasonRemoteMissing {
		t.Fatalf("act: %+v", r)
	}
	if _, _, err := e.call("computer_observe", nil); err == nil || err.Details["reason"] != wayland.ReasonPending {
		t.Fatalf("first observation: %v", err)
	}
	e.s.AllowScreenshots()
	tstest.WaitFor(t, 2*time.Minute, "the desktop", func() bool { return len(e.desktops().Monitors) == 1 })
	// Below the top bar, whose clock may turn between the two.
	const bar = 40
	// The session runs with animations off (the consent dialog would fade
	// out, a flash follow each capture, for as long as a loaded machine
	// makes them last); still, compare only a screen that holds still,
	// before the observation and for the reference after it.
	settled := func() *image.RGBA {
		prev := e.s.Capture()
		tstest.WaitFor(t, time.Minute, "the screen to hold still", func() bool {
			cur := e.s.Capture()
			still := waylandtest.Differ(cur, prev, 0, 0) == 0
			prev = cur
			return still
		})
		return prev
	}
	settled()
	obs, img := e.observe(nil)
	ref := settled()
	if img.Rect != ref.Rect {
		t.Fatalf("the screenshot is %v, the screen %v", img.Rect, ref.Rect)
	}
	top := image.NewRGBA(image.Rect(0, 0, e.s.W, e.s.H-bar))
	draw.Draw(top, top.Rect, img, image.Pt(0, bar), draw.Src)
	waylandtest.Same(t, "the screenshot against the reference capture", top, ref, 0, bar)
	_, _, err := e.call("computer_act", map[string]any{"observation_id": obs.ObservationID, "action": "move", "x": 10, "y": 10})
	if err == nil || err.Code != FeatureNotSupported || err.Details["reason"] != wayland.ReasonRemoteMissing {
		t.Fatalf("act: %v", err)
	}
	var left []string
	filepath.WalkDir(e.s.Home, func(p string, de os.DirEntry, err error) error {
		if err == nil && strings.HasSuffix(p, ".png") {
			left = append(left, p)
		}
		return nil
	})
	if len(left) > 0 {
		t.Fatalf("screenshot files left behind: %v", left)
	}
}

// TestWaylandInputNotGranted: a person who shares the screen without
// allowing remote interaction gets observe without act: the desktop says
// why, an act is INPUT_NOT_GRANTED (not PERMISSION_PENDING) with a receipt
// of its steps, none dispatched, and the observation is not used up.
func TestWaylandInputNotGranted(t *testing.T) {
	e := newWaylandEnv(t, waylandtest.Options{})
	e.s.Terminal(t.TempDir())
	d := e.consent(false)
	if r := d.Operations["computer_act"]; r.Ready || r.Reason != native.ReasonInputNotGranted {
		t.Fatalf("act readiness without input: %+v", r)
	}
	if r := d.Operations["computer_observe"]; !r.Ready {
		t.Fatalf("observe readiness: %+v", r)
	}
	obs, _ := e.observe(nil)
	for range 2 { // the refusal gives the reference back
		_, _, err := e.call("computer_act", map[string]any{"observation_id": obs.ObservationID, "action": "click", "x": 10, "y": 10})
		if err == nil || err.Code != InputNotGranted || err.Details["reason"] != native.ReasonInputNotGranted {
			t.Fatalf("act without input: %v", err)
		}
		if r, _ := err.Details["receipt"].(map[string]any); r["status"] != desktopapi.NotDispatched || r["steps"] != 3.0 || r["dispatched"] != 0.0 {
			t.Fatalf("receipt: %v", err.Details["receipt"])
		}
	}
	if ok, why := e.svc.Ready(context.Background()); ok || why != native.ReasonInputNotGranted {
		t.Fatalf("Ready %v %q", ok, why)
	}
}

// TestWaylandConsentTimeout: with a grace far longer than the test, an
// observation that needs the person answers at once (there is no restore
// token, so nothing can change within the grace), and so does the next
// while the dialog is open; once nobody answered within the consent
// timeout, the desktop says not ready, with the reason.
func TestWaylandConsentTimeout(t *testing.T) {
	e := newWaylandEnvWith(t, waylandtest.Options{}, func(c *wayland.Config) {
		c.ConsentGrace = time.Hour
		c.ConsentTimeout = 3 * time.Second
	})
	e.s.Terminal(t.TempDir())
	for range 2 {
		if _, _, err := e.call("computer_observe", nil); err == nil || err.Code != PermissionPending || err.Details["reason"] != wayland.ReasonPending {
			t.Fatalf("observation without consent: %v", err)
		}
	}
	var d desktopapi.Desktop
	tstest.WaitFor(t, 2*time.Minute, "the consent timeout", func() bool {
		d = e.desktops()
		return d.Operations["computer_observe"].Reason == wayland.ReasonConsentTimedOut
	})
	for _, op := range []string{"computer_observe", "computer_act"} {
		if r := d.Operations[op]; r.Ready || r.Reason != wayland.ReasonConsentTimedOut || r.Detail == "" {
			t.Errorf("%s after the timeout: %+v", op, r)
		}
	}
	if ok, why := e.svc.Ready(context.Background()); ok || why != wayland.ReasonConsentTimedOut {
		t.Fatalf("Ready %v %q", ok, why)
	}
}
