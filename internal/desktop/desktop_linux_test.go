package desktop

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image"
	"image/jpeg"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/desktop/native"
	"github.com/hostlink/hostlink/internal/desktop/xvfbtest"
	"github.com/hostlink/hostlink/internal/desktopapi"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
)

// env is a Service on a private Xvfb, registered in a registry audited to
// a real log.
type env struct {
	t   *testing.T
	d   *xvfbtest.Display
	s   *Service
	reg *ops.Registry
	now time.Time // the Service's clock, moved by tests

	auditDir string
}

func newEnv(t *testing.T, w, h int) *env {
	t.Helper()
	d := xvfbtest.Start(t, w, h)
	dir := t.TempDir()
	e := &env{t: t, d: d, reg: auditedRegistry(t, dir), now: time.Now(), auditDir: dir}
	e.s = New(Options{Open: openX11(d.Name, nil), Settle: 300 * time.Millisecond})
	e.s.opts.now = func() time.Time { return e.now }
	t.Cleanup(func() { e.s.Close() })
	Register(e.reg, e.s)
	return e
}

// call runs op as transport "test" and returns the typed result or the
// typed error.
func (e *env) call(op string, args any) (any, *errcode.Error) {
	return e.callAs(audit.MCPStdio, op, args)
}

func (e *env) callAs(transport audit.Transport, op string, args any) (any, *errcode.Error) {
	e.t.Helper()
	return callOp(context.Background(), e.reg, transport, op, args)
}

func (e *env) observe(args map[string]any) *desktopapi.Observation {
	e.t.Helper()
	out, err := e.call("computer_observe", args)
	if err != nil {
		e.t.Fatalf("computer_observe %v: %v", args, err)
	}
	o := out.(desktopapi.Observation)
	return &o
}

func (e *env) act(args map[string]any) *desktopapi.ActResult {
	e.t.Helper()
	out, err := e.call("computer_act", args)
	if err != nil {
		e.t.Fatalf("computer_act %v: %v", args, err)
	}
	r := out.(desktopapi.ActResult)
	return &r
}

func (e *env) pointer() string {
	out := e.d.Run("xdotool", "getmouselocation")
	f := strings.Fields(out)
	return f[0] + " " + f[1]
}

func decodePNG(t *testing.T, b []byte) *image.RGBA {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	out := image.NewRGBA(img.Bounds())
	for y := img.Bounds().Min.Y; y < img.Bounds().Max.Y; y++ {
		for x := img.Bounds().Min.X; x < img.Bounds().Max.X; x++ {
			out.Set(x, y, img.At(x, y))
		}
	}
	return out
}

// differ counts pixels of a that differ from b at offset (ox, oy).
func differ(a, b *image.RGBA, ox, oy int) int {
	n := 0
	for y := 0; y < a.Rect.Dy(); y++ {
		for x := 0; x < a.Rect.Dx(); x++ {
			p, q := a.RGBAAt(x, y), b.RGBAAt(x+ox, y+oy)
			if p.R != q.R || p.G != q.G || p.B != q.B {
				n++
			}
		}
	}
	return n
}

// absolute returns a window's position on the root as xwininfo reads it.
func absolute(d *xvfbtest.Display, id string) (x, y int) {
	out := d.Run("xwininfo", "-id", id)
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimSpace(l)
		fmt.Sscanf(l, "Absolute upper-left X: %d", &x)
		fmt.Sscanf(l, "Absolute upper-left Y: %d", &y)
	}
	return x, y
}

func window(o *desktopapi.Observation, title string) *desktopapi.WindowInfo {
	for i := range o.Windows {
		if o.Windows[i].Title == title {
			return &o.Windows[i]
		}
	}
	return nil
}

func TestDesktopsListsTheWindow(t *testing.T) {
	e := newEnv(t, 800, 600)
	e.d.Xterm("listed-term", 50, 60, t.TempDir())
	out, err := e.call("computer_desktops", map[string]any{"windows": true})
	if err != nil {
		t.Fatal(err)
	}
	res := out.(desktopapi.DesktopsResult)
	if len(res.Desktops) != 1 {
		t.Fatalf("desktops %+v", res)
	}
	dk := res.Desktops[0]
	if dk.ID != "x11:"+e.d.Name || dk.CoordinateSpace != "pixels" || len(dk.Monitors) != 1 ||
		dk.Monitors[0].Bounds != (native.Rect{W: 800, H: 600}) {
		t.Fatalf("desktop %+v", dk)
	}
	for _, op := range []string{"computer_observe", "computer_act", "focus"} {
		if !dk.Operations[op].Ready {
			t.Errorf("%s not ready: %+v", op, dk.Operations[op])
		}
	}
	if a := dk.Operations["accessibility"]; a.Ready || a.Reason == "" {
		t.Errorf("accessibility without AT-SPI: %+v", a)
	}
	found := false
	for _, w := range dk.Windows {
		found = found || (w.Title == "listed-term" && w.App == "XTerm")
	}
	if !found {
		t.Fatalf("xterm not listed: %+v", dk.Windows)
	}
	if ok, why := e.s.Ready(context.Background()); !ok {
		t.Fatalf("Ready: %s", why)
	}
}

func TestObserveMatchesXWD(t *testing.T) {
	e := newEnv(t, 800, 600)
	id := e.d.Xterm("observed", 40, 50, t.TempDir())
	var obs *desktopapi.Observation
	want := e.d.Still(func() { obs = e.observe(map[string]any{"accessibility": true}) })
	if len(obs.Images) != 1 || obs.Images[0].MIMEType != "image/png" || obs.Image.Bytes != len(obs.Images[0].Data) {
		t.Fatalf("images %d, info %+v", len(obs.Images), obs.Image)
	}
	got := decodePNG(t, obs.Images[0].Data)
	if got.Rect != want.Rect {
		t.Fatalf("observation %v, xwd %v", got.Rect, want.Rect)
	}
	if n := differ(got, want, 0, 0); n != 0 {
		t.Fatalf("%d pixels differ from xwd", n)
	}
	// The image never enters the JSON.
	body, _ := json.Marshal(obs)
	if bytes.Contains(body, obs.Images[0].Data[:16]) || len(body) > 16<<10 {
		t.Fatalf("JSON result of %d bytes carries image data", len(body))
	}
	w := window(obs, "observed")
	if w == nil || w.Ref == "" || !strings.HasPrefix(w.Ref, "win_") {
		t.Fatalf("window not in observation: %+v", obs.Windows)
	}
	if x, y := absolute(e.d, id); w.Bounds.X != x || w.Bounds.Y != y {
		t.Fatalf("window bounds %+v, xwininfo: %d,%d", w.Bounds, x, y)
	}
	if obs.Accessibility == nil || obs.Accessibility.Available || obs.Accessibility.Reason != "no_session_bus" {
		t.Fatalf("accessibility %+v", obs.Accessibility)
	}
	// A region of that image: its pixels and its coordinates.
	reg := e.observe(map[string]any{"region": map[string]any{"observation_id": obs.ObservationID, "x": 100, "y": 120, "w": 200, "h": 150}})
	rimg := decodePNG(t, reg.Images[0].Data)
	if rimg.Rect.Dx() != 200 || rimg.Rect.Dy() != 150 || reg.Image.Origin != [2]int{100, 120} {
		t.Fatalf("region image %v origin %v", rimg.Rect, reg.Image.Origin)
	}
	if n := differ(rimg, want, 100, 120); n != 0 {
		t.Fatalf("%d region pixels differ", n)
	}
	// Act at region coordinates: (10, 20) in the region is (110, 140) on screen.
	e.act(map[string]any{"observation_id": reg.ObservationID, "action": "move", "x": 10, "y": 20, "settle_ms": 0})
	if p := e.pointer(); p != "x:110 y:140" {
		t.Fatalf("pointer %s", p)
	}
	// A region outside the image is refused.
	if _, err := e.call("computer_observe", map[string]any{"region": map[string]any{"observation_id": obs.ObservationID, "x": 700, "y": 0, "w": 200, "h": 10}}); err == nil || err.Code != InputOutOfBounds {
		t.Fatalf("region outside: %v", err)
	}
}

// TestActTypesIntoTerminal focuses the xterm through its window reference,
// types a command and checks its effect three ways: the file the command
// writes, the terminal title it sets (read from the next observation's
// window list) and the terminal's pixels.
func TestActTypesIntoTerminal(t *testing.T) {
	e := newEnv(t, 800, 600)
	dir := t.TempDir()
	e.d.Xterm("typing-target", 30, 30, dir)
	e.d.Xterm("other", 400, 300, dir)
	obs := e.observe(nil)
	w := window(obs, "typing-target")
	if w == nil {
		t.Fatalf("no window: %+v", obs.Windows)
	}
	res := e.act(map[string]any{"observation_id": obs.ObservationID, "action": "focus", "window_ref": w.Ref})
	if res.Receipt.Status != desktopapi.Accepted || res.Observation == nil {
		t.Fatalf("focus: %+v %v", res.Receipt, res.ObservationError)
	}
	if fw := window(res.Observation, "typing-target"); fw == nil || !fw.Focused {
		t.Fatalf("after focus: %+v", res.Observation.Windows)
	}
	before := decodePNG(t, res.Observation.Images[0].Data)
	cmd := `echo hostlink-typed > typed.txt; printf '\033]2;%s\007' "done-$((6*7))"` + "\n"
	res = e.act(map[string]any{"observation_id": res.Observation.ObservationID, "action": "type", "text": cmd, "settle_ms": 500})
	if res.Receipt.Status != desktopapi.Accepted || res.Receipt.Dispatched != 1 {
		t.Fatalf("type receipt %+v", res.Receipt)
	}
	got, err := os.ReadFile(filepath.Join(dir, "typed.txt"))
	if err != nil || string(got) != "hostlink-typed\n" {
		t.Fatalf("typed.txt: %q %v", got, err)
	}
	// The audit log records the act, never the text typed.
	rec, _ := os.ReadFile(filepath.Join(e.auditDir, "audit.log"))
	if bytes.Contains(rec, []byte("hostlink-typed")) || !bytes.Contains(rec, []byte("text_sha256_prefix")) {
		t.Fatalf("audit log:\n%s", rec)
	}
	after := res.Observation
	for i := 0; window(after, "done-42") == nil && i < 20; i++ {
		after = e.observe(nil)
	}
	tw := window(after, "done-42")
	if tw == nil {
		t.Fatalf("the command's title never showed: %+v", after.Windows)
	}
	// The terminal's pixels changed (the command line and its echo), and
	// only inside the terminal.
	img := decodePNG(t, after.Images[0].Data)
	inside := img.SubImage(image.Rect(tw.Bounds.X, tw.Bounds.Y, tw.Bounds.X+tw.Bounds.W, tw.Bounds.Y+tw.Bounds.H)).(*image.RGBA)
	changed := 0
	for y := inside.Rect.Min.Y; y < inside.Rect.Max.Y; y++ {
		for x := inside.Rect.Min.X; x < inside.Rect.Max.X; x++ {
			if img.RGBAAt(x, y) != before.RGBAAt(x, y) {
				changed++
			}
		}
	}
	if changed < 50 {
		t.Fatalf("only %d pixels of the terminal changed", changed)
	}
	// A key chord: the shell runs what enter submits.
	res = e.act(map[string]any{"observation_id": after.ObservationID, "action": "type", "text": "touch chord.txt", "settle_ms": 0})
	e.act(map[string]any{"observation_id": res.Observation.ObservationID, "action": "key", "keys": "Return", "settle_ms": 0})
	e.d.Eventually("chord.txt", func() bool {
		_, err := os.Stat(filepath.Join(dir, "chord.txt"))
		return err == nil
	})
}

func TestClicksLandWhereAsked(t *testing.T) {
	e := newEnv(t, 800, 600)
	obs := e.observe(nil)
	for _, p := range [][2]int{{5, 7}, {400, 300}, {799, 599}} {
		res := e.act(map[string]any{"observation_id": obs.ObservationID, "action": "click", "x": p[0], "y": p[1], "settle_ms": 0})
		if res.Receipt.Status != desktopapi.Accepted || res.Receipt.Dispatched != 3 {
			t.Fatalf("receipt %+v", res.Receipt)
		}
		if got, want := e.pointer(), fmt.Sprintf("x:%d y:%d", p[0], p[1]); got != want {
			t.Fatalf("pointer %s, want %s", got, want)
		}
		if res.Observation.Cursor == nil || *res.Observation.Cursor != (desktopapi.Point{X: p[0], Y: p[1]}) {
			t.Fatalf("observed cursor %+v", res.Observation.Cursor)
		}
		obs = res.Observation
	}
	// The link's path to the backend shares the queue and sees the same.
	var cx, cy int
	if err := e.s.Do(context.Background(), "", func(b native.Backend) (err error) {
		cx, cy, err = b.Cursor(context.Background())
		return err
	}); err != nil || cx != 799 || cy != 599 {
		t.Fatalf("Do: cursor %d,%d %v", cx, cy, err)
	}
	// Outside the image: refused, nothing moves, the reference survives.
	_, err := e.call("computer_act", map[string]any{"observation_id": obs.ObservationID, "action": "click", "x": 800, "y": 10})
	if err == nil || err.Code != InputOutOfBounds || err.Details["image"] == nil {
		t.Fatalf("out of bounds: %v", err)
	}
	// Unknown key names are refused before dispatch.
	if _, err := e.call("computer_act", map[string]any{"observation_id": obs.ObservationID, "action": "key", "keys": "ctrl+hyperdrive"}); err == nil || err.Code != KeyUnmapped {
		t.Fatalf("unknown key: %v", err)
	}
	e.act(map[string]any{"observation_id": obs.ObservationID, "action": "scroll", "x": 20, "y": 20, "dy": 240, "settle_ms": 0})
	if got := e.pointer(); got != "x:20 y:20" {
		t.Fatalf("pointer after scroll %s", got)
	}
}

func TestReferences(t *testing.T) {
	e := newEnv(t, 640, 480)
	obs := e.observe(nil)
	move := func(id string, x int) *errcode.Error {
		_, err := e.call("computer_act", map[string]any{"observation_id": id, "action": "move", "x": x, "y": 10, "settle_ms": 0})
		return err
	}
	// Foreign: another transport's reference, or one never issued.
	if _, err := e.callAs(audit.MCPHTTP, "computer_act", map[string]any{"observation_id": obs.ObservationID, "action": "move", "x": 1, "y": 1}); err == nil || err.Code != ObservationUnknown {
		t.Fatalf("foreign transport: %v", err)
	}
	if err := move("obs_nonexistent", 1); err == nil || err.Code != ObservationUnknown {
		t.Fatalf("unknown: %v", err)
	}
	if p := e.pointer(); p == "x:1 y:1" {
		t.Fatal("a refused act moved the pointer")
	}
	// Consumed by the first act.
	if err := move(obs.ObservationID, 11); err != nil {
		t.Fatal(err)
	}
	if err := move(obs.ObservationID, 22); err == nil || err.Code != ObservationConsumed {
		t.Fatalf("second use: %v", err)
	}
	if p := e.pointer(); p != "x:11 y:10" {
		t.Fatalf("pointer %s after a refused second use", p)
	}
	// Expired after two minutes.
	obs = e.observe(nil)
	e.now = e.now.Add(MaxRefTTL)
	if err := move(obs.ObservationID, 33); err == nil || err.Code != ObservationExpired {
		t.Fatalf("expired: %v", err)
	}
	if p := e.pointer(); p != "x:11 y:10" {
		t.Fatalf("pointer %s after an expired act", p)
	}
}

func TestDriftRefusesBeforeDispatch(t *testing.T) {
	e := newEnv(t, 800, 600)
	dir := t.TempDir()
	a := e.d.Xterm("drift-a", 20, 20, dir)
	b := e.d.Xterm("drift-b", 400, 300, dir)
	e.d.Run("xdotool", "windowactivate", "--sync", a)
	obs := e.observe(nil)
	e.d.Run("xdotool", "windowmove", "--sync", a, "100", "120")
	_, err := e.call("computer_act", map[string]any{"observation_id": obs.ObservationID, "action": "click", "x": 300, "y": 200})
	if err == nil || err.Code != DesktopDrift || !strings.Contains(err.Message, "geometry") {
		t.Fatalf("moved window: %v", err)
	}
	if r, _ := err.Details["receipt"].(desktopapi.Receipt); r.Status != desktopapi.NotDispatched || r.Steps != 3 || r.Dispatched != 0 {
		t.Fatalf("drift receipt %+v", err.Details["receipt"])
	}
	if p := e.pointer(); p == "x:300 y:200" {
		t.Fatal("a drifted act moved the pointer")
	}
	obs = e.observe(nil)
	e.d.Run("xdotool", "windowactivate", "--sync", b)
	_, err = e.call("computer_act", map[string]any{"observation_id": obs.ObservationID, "action": "type", "text": "x"})
	if err == nil || err.Code != DesktopDrift || !strings.Contains(err.Message, "focus") {
		t.Fatalf("focus change: %v", err)
	}
	// A window that went away is stale.
	obs = e.observe(nil)
	wb := window(obs, "drift-b")
	e.d.Run("xdotool", "windowactivate", "--sync", a)
	obs2 := e.observe(nil)
	e.d.Run("xdotool", "windowkill", b)
	e.d.Eventually("drift-b gone", func() bool {
		out, _ := e.d.Output("xdotool", "search", "--name", "^drift-b$")
		return strings.TrimSpace(out) == ""
	})
	_ = obs
	wb2 := window(obs2, "drift-b")
	if wb == nil || wb2 == nil {
		t.Fatal("drift-b not observed")
	}
	if _, err := e.call("computer_act", map[string]any{"observation_id": obs2.ObservationID, "action": "focus", "window_ref": wb2.Ref}); err == nil || err.Code != WindowStale {
		t.Fatalf("gone window: %v", err)
	}
}

// TestSecondMonitor defines two RandR monitors over one screen and
// observes and clicks on the second.
func TestSecondMonitor(t *testing.T) {
	e := newEnv(t, 1600, 600)
	xvfbtest.Need(t, "xrandr")
	id := e.d.Xterm("on-right", 900, 100, t.TempDir())
	e.d.Run("xrandr", "--setmonitor", "LEFT", "800/200x600/150+0+0", "none")
	e.d.Run("xrandr", "--setmonitor", "RIGHT", "800/200x600/150+800+0", "none")
	out, err := e.call("computer_desktops", nil)
	if err != nil {
		t.Fatal(err)
	}
	mons := out.(desktopapi.DesktopsResult).Desktops[0].Monitors
	if len(mons) != 2 || mons[1].Name != "RIGHT" || mons[1].Bounds != (native.Rect{X: 800, W: 800, H: 600}) {
		t.Fatalf("monitors %+v", mons)
	}
	var obs *desktopapi.Observation
	screen := e.d.Still(func() { obs = e.observe(map[string]any{"monitor": 1}) })
	img := decodePNG(t, obs.Images[0].Data)
	if img.Rect.Dx() != 800 || obs.Image.Origin != [2]int{800, 0} {
		t.Fatalf("monitor 1 image %v origin %v", img.Rect, obs.Image.Origin)
	}
	if n := differ(img, screen, 800, 0); n != 0 {
		t.Fatalf("%d pixels of monitor 1 differ", n)
	}
	x, _ := absolute(e.d, id)
	if w := window(obs, "on-right"); w == nil || w.Bounds.X != x-800 {
		t.Fatalf("window bounds in monitor-1 image coordinates: %+v", w)
	}
	e.act(map[string]any{"observation_id": obs.ObservationID, "action": "click", "x": 10, "y": 20, "settle_ms": 0})
	if p := e.pointer(); p != "x:810 y:20" {
		t.Fatalf("pointer %s", p)
	}
	// All monitors stitched, at full size when max_edge allows, else
	// scaled down to the default 1280.
	all := e.observe(map[string]any{"max_edge": 1600})
	if all.Image.Width != 1600 || len(all.Monitors) != 2 || all.Monitors[1].Bounds.X != 800 {
		t.Fatalf("stitched %+v %+v", all.Image, all.Monitors)
	}
	all = e.observe(nil)
	if all.Image.Width != 1280 || all.Image.Height != 480 || all.Image.NativeSize != [2]int{1600, 600} || len(all.Monitors) != 2 ||
		all.Monitors[1].Bounds != (native.Rect{X: 640, W: 640, H: 480}) {
		t.Fatalf("stitched, scaled %+v %+v", all.Image, all.Monitors)
	}
	if _, err := e.call("computer_observe", map[string]any{"monitor": 2}); err == nil || err.Code != errcode.InvalidArgument {
		t.Fatalf("monitor 2: %v", err)
	}
	// The geometry changed since `all`: the act drifts.
	e.d.Run("xrandr", "--delmonitor", "LEFT")
	if _, err := e.call("computer_act", map[string]any{"observation_id": all.ObservationID, "action": "move", "x": 1, "y": 1}); err == nil || err.Code != DesktopDrift {
		t.Fatalf("monitor removed: %v", err)
	}
}

// TestObserveAccessibility: with AT-SPI running, an observation asked for
// accessibility carries the focused application's tree, bounded.
func TestObserveAccessibility(t *testing.T) {
	e := newEnv(t, 640, 480)
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", e.d.SessionBus())
	e.d.GtkApp("a11y-observed", "press-me")
	var obs *desktopapi.Observation
	e.d.Eventually("the button in an observation", func() bool {
		obs = e.observe(map[string]any{"accessibility": true})
		return obs.Accessibility.Available && strings.Contains(obs.Accessibility.Text, "push button: press-me")
	})
	e.s.opts.MaxAccessibilityBytes = 16
	obs = e.observe(map[string]any{"accessibility": true})
	if a := obs.Accessibility; !a.Available || !a.Truncated || len(a.Text) > 16 {
		t.Fatalf("bounded: %+v", a)
	}
}

// TestObserveFormatsAndCursor: JPEG is close to the screen, and the cursor
// overlay marks the pointer where the observation says it is.
func TestObserveFormatsAndCursor(t *testing.T) {
	e := newEnv(t, 640, 480)
	e.d.Xterm("fmt-term", 20, 20, t.TempDir())
	e.d.Run("xdotool", "mousemove", "300", "200")
	var obs *desktopapi.Observation
	want := e.d.Still(func() { obs = e.observe(map[string]any{"format": "jpeg", "quality": 90}) })
	if obs.Images[0].MIMEType != "image/jpeg" {
		t.Fatalf("mime %s", obs.Images[0].MIMEType)
	}
	img, err := jpeg.Decode(bytes.NewReader(obs.Images[0].Data))
	if err != nil {
		t.Fatal(err)
	}
	var sum, n float64
	for y := 0; y < 480; y += 3 {
		for x := 0; x < 640; x += 3 {
			r, _, _, _ := img.At(x, y).RGBA()
			sum += math.Abs(float64(r>>8) - float64(want.RGBAAt(x, y).R))
			n++
		}
	}
	if mean := sum / n; mean > 8 {
		t.Fatalf("JPEG differs from the screen by %.1f on average", mean)
	}
	obs = e.observe(map[string]any{"include_cursor": true})
	if obs.Cursor == nil || *obs.Cursor != (desktopapi.Point{X: 300, Y: 200}) {
		t.Fatalf("cursor %+v", obs.Cursor)
	}
	got := decodePNG(t, obs.Images[0].Data)
	white, black := got.RGBAAt(305, 200), got.RGBAAt(305, 201)
	if white.R != 255 || white.G != 255 || black.R != 0 || black.G != 0 {
		t.Fatalf("no cursor mark at the pointer: %v %v", white, black)
	}
	if differ(got, want, 0, 0) == 0 {
		t.Fatal("the overlay changed nothing")
	}
}

// TestRacingActsConsumeOnce: two acts on one reference at once; exactly
// one is dispatched.
func TestRacingActsConsumeOnce(t *testing.T) {
	e := newEnv(t, 640, 480)
	obs := e.observe(nil)
	type result struct {
		out any
		err *errcode.Error
	}
	results := make(chan result, 2)
	for _, x := range []int{100, 200} {
		go func() {
			raw, _ := json.Marshal(map[string]any{"observation_id": obs.ObservationID, "action": "move", "x": x, "y": 50, "settle_ms": 0})
			out, err := e.reg.Call(context.Background(), ops.Caller{Transport: audit.MCPStdio}, "computer_act", raw, nil)
			results <- result{out, errcode.As(err)}
		}()
	}
	ok, consumed := 0, 0
	for range 2 {
		r := <-results
		switch {
		case r.err == nil && r.out.(desktopapi.ActResult).Receipt.Status == desktopapi.Accepted:
			ok++
		case r.err != nil && r.err.Code == ObservationConsumed:
			consumed++
		default:
			t.Fatalf("unexpected %+v %v", r.out, r.err)
		}
	}
	if ok != 1 || consumed != 1 {
		t.Fatalf("%d accepted, %d refused as consumed", ok, consumed)
	}
}

// TestOneQueuePerDesktop: two Services on one display share its queue, so
// an observation of one waits while the other holds it.
func TestOneQueuePerDesktop(t *testing.T) {
	e := newEnv(t, 320, 240)
	other := New(Options{Open: e.s.opts.Open})
	defer other.Close()
	ctx := context.Background()
	held := make(chan struct{})
	release := make(chan struct{})
	go other.Do(ctx, "", func(native.Backend) error {
		close(held)
		<-release
		return nil
	})
	<-held
	waiting, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	defer cancel()
	if _, err := e.s.observe(waiting, &ops.Call{}, desktopapi.ObserveArgs{}); errcode.CodeOf(err) != errcode.Cancelled {
		t.Fatalf("observe while the other service holds the queue: %v", err)
	}
	close(release)
	if _, err := e.s.observe(ctx, &ops.Call{}, desktopapi.ObserveArgs{}); err != nil {
		t.Fatal(err)
	}
}

// TestRefusedActKeepsReference: input the backend could never send (a
// fraction of a notch, a control character X11 has no key for, an unknown
// key, more distinct unmapped characters than spare keycodes) is refused
// with nothing dispatched and without using up the observation: the same
// reference then acts.
func TestRefusedActKeepsReference(t *testing.T) {
	e := newEnv(t, 640, 480)
	obs := e.observe(nil)
	many := []rune{}
	for r := rune(0x4e00); len(many) < 400; r++ {
		many = append(many, r)
	}
	for _, tt := range []struct {
		args map[string]any
		code errcode.Code
	}{
		{map[string]any{"action": "scroll", "x": 30, "y": 30, "dy": 60}, FeatureNotSupported},
		{map[string]any{"action": "type", "text": "ab\x01c"}, KeyUnmapped},
		{map[string]any{"action": "key", "keys": "ctrl+hyperdrive"}, KeyUnmapped},
		// Found inside the backend (the keyboard map has too few spare
		// keycodes), before it sends anything: the reference is given back.
		{map[string]any{"action": "type", "text": string(many)}, KeyUnmapped},
	} {
		tt.args["observation_id"] = obs.ObservationID
		_, err := e.call("computer_act", tt.args)
		if err == nil || err.Code != tt.code {
			t.Fatalf("%v: %v", tt.args["action"], err)
		}
		if r, _ := err.Details["receipt"].(desktopapi.Receipt); r.Status != desktopapi.NotDispatched || r.Dispatched != 0 {
			t.Fatalf("%v: receipt %+v", tt.args["action"], err.Details["receipt"])
		}
	}
	if p := e.pointer(); p == "x:30 y:30" {
		t.Fatal("a refused scroll moved the pointer")
	}
	res := e.act(map[string]any{"observation_id": obs.ObservationID, "action": "move", "x": 31, "y": 32, "settle_ms": 0})
	if res.Receipt.Status != desktopapi.Accepted {
		t.Fatalf("act on the kept reference: %+v", res.Receipt)
	}
	if p := e.pointer(); p != "x:31 y:32" {
		t.Fatalf("pointer %s", p)
	}
}

// TestScaledRoundTrip observes a virtual screen of 8192×4320, over the old
// per-request limit, which observe now scales down instead of refusing,
// at three scales (the default max_edge, a larger max_edge and a region of
// the first image), and checks that every coordinate maps exactly: the
// pointer lands on the native pixel under the centre of the image pixel
// clicked, the fresh observation shows the cursor at that image pixel, and
// window and monitor bounds are the native bounds mapped to the image.
func TestScaledRoundTrip(t *testing.T) {
	const W, H = 8192, 4320
	e := newEnv(t, W, H)
	e.d.Xterm("scaled", 4000, 2000, t.TempDir())
	out, err := e.call("computer_desktops", map[string]any{"windows": true})
	if err != nil {
		t.Fatal(err)
	}
	var native0 native.Rect
	for _, w := range out.(desktopapi.DesktopsResult).Desktops[0].Windows {
		if w.Title == "scaled" {
			native0 = w.Bounds
		}
	}
	if native0.Empty() {
		t.Fatal("the xterm is not listed")
	}
	// Native pixel under the centre of image pixel i, and the image pixels
	// a native span touches, computed apart from the code under test.
	toNative := func(i, img, nat int) int { return int(math.Floor((float64(i) + 0.5) * float64(nat) / float64(img))) }
	lo := func(n, img, nat int) int { return int(math.Floor(float64(n) * float64(img) / float64(nat))) }
	hi := func(n, img, nat int) int { return int(math.Ceil(float64(n) * float64(img) / float64(nat))) }

	check := func(name string, obs *desktopapi.Observation, origin native.Rect, iw, ih int, points [][2]int) {
		t.Helper()
		im := obs.Image
		if im.Width != iw || im.Height != ih || im.Origin != [2]int{origin.X, origin.Y} || im.NativeSize != [2]int{origin.W, origin.H} ||
			math.Abs(im.Scale-float64(iw)/float64(origin.W)) > 1e-9 {
			t.Fatalf("%s: image %+v, want %dx%d of %v", name, im, iw, ih, origin)
		}
		if origin.X == 0 && origin.Y == 0 && origin.W == W {
			if m := obs.Monitors[0].Bounds; m != (native.Rect{W: iw, H: ih}) {
				t.Fatalf("%s: monitor bounds %v", name, m)
			}
			want := native.Rect{X: lo(native0.X, iw, W), Y: lo(native0.Y, ih, H)}
			want.W, want.H = hi(native0.X+native0.W, iw, W)-want.X, hi(native0.Y+native0.H, ih, H)-want.Y
			if w := window(obs, "scaled"); w == nil || w.Bounds != want {
				t.Fatalf("%s: window bounds %+v, want %v (native %v)", name, w, want, native0)
			}
			// The xterm's white is where its bounds say, the root's black
			// around it.
			img := decodeImage(t, obs)
			if c := img.RGBAAt(want.X+want.W/2, want.Y+want.H/2); c.R < 200 || c.G < 200 || c.B < 200 {
				t.Fatalf("%s: the window's centre is %v", name, c)
			}
			if c := img.RGBAAt(want.X/2, want.Y/2); c.R > 60 {
				t.Fatalf("%s: the root is %v", name, c)
			}
		}
		for _, p := range points {
			res := e.act(map[string]any{"observation_id": obs.ObservationID, "action": "move", "x": p[0], "y": p[1], "settle_ms": 0})
			nx, ny := origin.X+toNative(p[0], iw, origin.W), origin.Y+toNative(p[1], ih, origin.H)
			if got, want := e.pointer(), fmt.Sprintf("x:%d y:%d", nx, ny); got != want {
				t.Fatalf("%s: image (%d, %d): pointer %s, want %s", name, p[0], p[1], got, want)
			}
			if res.Observation == nil || res.Observation.Cursor == nil || *res.Observation.Cursor != (desktopapi.Point{X: p[0], Y: p[1]}) {
				t.Fatalf("%s: image (%d, %d): fresh observation's cursor %+v", name, p[0], p[1], res.Observation)
			}
			obs = res.Observation
		}
	}
	screen := native.Rect{W: W, H: H}
	obs := e.observe(map[string]any{"monitor": 0})
	check("default max_edge", obs, screen, 1280, 675, [][2]int{{0, 0}, {1279, 674}, {640, 337}, {333, 111}})
	obs = e.observe(map[string]any{"max_edge": 3000})
	check("max_edge 3000", obs, screen, 3000, 1582, [][2]int{{2999, 1581}, {1, 1}, {1777, 901}})
	if obs.Image.CaptureSize != [2]int{W, H} {
		t.Fatalf("capture size %v", obs.Image.CaptureSize)
	}
	// A region of the default image: native (640, 320) to (2688, 1600),
	// 2048×1280, shown at 1280×800.
	obs = e.observe(map[string]any{"monitor": 0})
	reg := e.observe(map[string]any{"region": map[string]any{"observation_id": obs.ObservationID, "x": 100, "y": 50, "w": 320, "h": 200}})
	check("region", reg, native.Rect{X: 640, Y: 320, W: 2048, H: 1280}, 1280, 800, [][2]int{{0, 0}, {1279, 799}, {401, 203}})
}

// decodeImage decodes an observation's PNG.
func decodeImage(t *testing.T, o *desktopapi.Observation) *image.RGBA {
	t.Helper()
	if len(o.Images) != 1 {
		t.Fatalf("%d images", len(o.Images))
	}
	return decodePNG(t, o.Images[0].Data)
}
