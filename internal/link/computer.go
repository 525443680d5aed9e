package link

import (
	"context"
	"encoding/base64"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/desktop/native"
	"github.com/hostlink/hostlink/internal/desktopapi"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/link/wire"
	"github.com/hostlink/hostlink/internal/textsafe"
)

// The screen: SCREENSHOT_REQUEST, INPUT_ACTION, DISPLAY_INFO_REQUEST and
// CURSOR_POSITION_REQUEST, converted to and from computer_observe,
// computer_act and computer_desktops. The protocol speaks display-global
// coordinates; the operations speak an observation's image pixels.

// maxWait caps INPUT_ACTION "wait", as the protocol's shim does.
const maxWait = 5 * time.Second

// monitors lists the first desktop's monitors, in native coordinates.
func (d *dataChannel) monitors(ctx context.Context, r *request) ([]native.Monitor, error) {
	out, err := r.helper(ctx, desktopapi.OpDesktops, desktopapi.DesktopsArgs{})
	if err != nil {
		return nil, err
	}
	ds := out.(desktopapi.DesktopsResult)
	if len(ds.Desktops) == 0 || len(ds.Desktops[0].Monitors) == 0 {
		return nil, errcode.New(errcode.DependencyMissing, "no desktop is reachable")
	}
	return ds.Desktops[0].Monitors, nil
}

// observe takes a helper observation of every monitor: what an input or a
// region is placed on.
func (d *dataChannel) observe(ctx context.Context, r *request, a desktopapi.ObserveArgs) (desktopapi.Observation, error) {
	out, err := r.helper(ctx, desktopapi.OpObserve, a)
	if err != nil {
		return desktopapi.Observation{}, err
	}
	return out.(desktopapi.Observation), nil
}

// monitorIndex maps the protocol's monitor number (0 primary, -1 all) to
// the desktop's index (-1 all).
func monitorIndex(mons []native.Monitor, n int) (int, error) {
	switch {
	case n == -1:
		return -1, nil
	case n == 0:
		for _, m := range mons {
			if m.Primary {
				return m.Index, nil
			}
		}
		return mons[0].Index, nil
	case n > 0 && n < len(mons):
		return mons[n].Index, nil
	}
	return 0, errcode.New(errcode.InvalidArgument, "no monitor %d", n)
}

func (d *dataChannel) screenshot(ctx context.Context, r *request) (string, any, error) {
	p, err := wire.DecodePayload[wire.ScreenshotRequest](r.e)
	if err != nil {
		return "", nil, err
	}
	if p.WindowID != nil && p.Region != nil {
		return "", nil, errcode.New(errcode.InvalidArgument, "region and window_id are mutually exclusive")
	}
	format := "jpeg"
	switch p.Format {
	case "", "jpeg":
	case "png":
		format = "png"
	default:
		return "", nil, errcode.New(errcode.InvalidArgument, "format must be jpeg or png")
	}
	quality := p.Quality
	if quality == 0 {
		quality = 75
	}
	if quality < 1 || quality > 100 {
		return "", nil, errcode.New(errcode.InvalidArgument, "quality must be 1 to 100")
	}
	if p.WindowID != nil {
		reg, err := d.windowRegion(ctx, r, *p.WindowID)
		if err != nil {
			return "", nil, err
		}
		p.Region = &reg
	}
	mon := 0
	if p.Monitor != nil {
		mon = *p.Monitor
	}
	mons, err := d.monitors(ctx, r)
	if err != nil {
		return "", nil, err
	}
	idx, err := monitorIndex(mons, mon)
	if err != nil {
		return "", nil, err
	}
	cursor := p.IncludeCursor == nil || *p.IncludeCursor
	args := desktopapi.ObserveArgs{Monitor: &idx, MaxEdge: desktopapi.MaxMaxEdge, Format: format, Quality: quality, Cursor: cursor}
	if p.Region != nil {
		// A display-global region: observe everything, then the region
		// inside that image.
		all, err := d.observe(ctx, r, desktopapi.ObserveArgs{Monitor: ptr(-1), MaxEdge: desktopapi.MaxMaxEdge, Format: "png"})
		if err != nil {
			return "", nil, err
		}
		g := *p.Region
		x1, y1 := toImage(all, g[0], g[1])
		x2, y2 := toImage(all, g[2], g[3])
		if x2 <= x1 || y2 <= y1 {
			return "", nil, errcode.New(errcode.InvalidArgument, "region must be [x1, y1, x2, y2] with x2 > x1 and y2 > y1")
		}
		args = desktopapi.ObserveArgs{Region: &desktopapi.Region{ObservationID: all.ObservationID, X: x1, Y: y1, W: x2 - x1, H: y2 - y1},
			MaxEdge: desktopapi.MaxMaxEdge, Format: format, Quality: quality, Cursor: cursor}
	}
	out, err := r.call(ctx, args)
	if err != nil {
		return "", nil, err
	}
	obs := out.(desktopapi.Observation)
	imgs := obs.ResultImages()
	if len(imgs) == 0 {
		return "", nil, errcode.New(errcode.Internal, "the observation has no image")
	}
	img := imgs[0] // the registry held it to the negotiated max_file_size_bytes
	scale := obs.Image.Scale
	if scale <= 0 {
		scale = 1
	}
	return wire.TypeScreenshotResponse, wire.ScreenshotResponse{
		ImageBase64: base64.StdEncoding.EncodeToString(img.Data), MIMEType: img.MIMEType,
		Width: obs.Image.Width, Height: obs.Image.Height, Monitor: mon, Region: p.Region, DisplayScale: scale,
		LogicalSize: [2]int{int(float64(obs.Image.Width) / scale), int(float64(obs.Image.Height) / scale)},
		Meta:        map[string]any{"origin": obs.Image.Origin, "display_id": 0},
	}, nil
}

func ptr[T any](v T) *T { return &v }

// scaleOf is an observation's image pixels per native unit.
func scaleOf(o desktopapi.Observation) float64 {
	if o.Image.Scale <= 0 {
		return 1
	}
	return o.Image.Scale
}

// toImage maps display-global coordinates to the observation's image.
func toImage(o desktopapi.Observation, x, y int) (int, int) {
	s := scaleOf(o)
	return int(float64(x-o.Image.Origin[0]) * s), int(float64(y-o.Image.Origin[1]) * s)
}

// toDisplay maps image coordinates back to display-global ones.
func toDisplay(o desktopapi.Observation, x, y int) (int, int) {
	s := scaleOf(o)
	return o.Image.Origin[0] + int(float64(x)/s), o.Image.Origin[1] + int(float64(y)/s)
}

// displayRect is a monitor's rectangle for INPUT_OUT_OF_BOUNDS, as the
// protocol's example has it: index, origin and size.
type displayRect struct {
	Index  int    `json:"index"`
	Origin [2]int `json:"origin"`
	Size   [2]int `json:"size"`
}

// displayRects lists the observed monitors' rectangles, display-global.
func displayRects(o desktopapi.Observation) []displayRect {
	var out []displayRect
	for i, m := range o.Monitors {
		x, y := toDisplay(o, m.Bounds.X, m.Bounds.Y)
		x2, y2 := toDisplay(o, m.Bounds.X+m.Bounds.W, m.Bounds.Y+m.Bounds.H)
		out = append(out, displayRect{Index: i, Origin: [2]int{x, y}, Size: [2]int{x2 - x, y2 - y}})
	}
	return out
}

// inputAction maps INPUT_ACTION onto computer_act: it observes every
// monitor (the act needs an observation), maps display-global coordinates
// into that image, and acts on it.
func (d *dataChannel) inputAction(ctx context.Context, r *request) (string, any, error) {
	p, err := wire.DecodePayload[wire.InputAction](r.e)
	if err != nil {
		return "", nil, err
	}
	act := desktopapi.ActArgs{SettleMS: ptr(0), Modifiers: p.Modifiers}
	button := func(def string) string {
		if p.Button != nil {
			return *p.Button
		}
		return def
	}
	switch p.Action {
	case "wait":
		ms := 0
		if p.DurationMS != nil {
			ms = *p.DurationMS
		}
		if ms < 0 {
			return "", nil, errcode.New(errcode.InvalidArgument, "duration_ms must not be negative")
		}
		// Bounded before converting: no duration_ms overflows the wait.
		dur := maxWait
		if int64(ms) < maxWait.Milliseconds() {
			dur = time.Duration(ms) * time.Millisecond
		}
		select {
		case <-time.After(dur):
		case <-ctx.Done():
			return "", nil, ctx.Err()
		}
		return wire.TypeAck, wire.AckPayload{OK: true}, nil
	case "left_click", "right_click", "middle_click", "double_click", "triple_click":
		act.Action, act.Button, act.Count = "click", button("left"), 1
		switch p.Action {
		case "right_click":
			act.Button = "right"
		case "middle_click":
			act.Button = "middle"
		case "double_click":
			act.Count = 2
		case "triple_click":
			act.Count = 3
		}
	case "mouse_move":
		act.Action = "move"
	case "mouse_down", "mouse_up":
		if p.Coordinate == nil {
			return "", nil, errcode.New(errcode.InvalidArgument, "%s needs a coordinate", p.Action)
		}
		act.Action, act.Button = p.Action, button("left")
	case "hold_key":
		if p.Key == nil || p.DurationMS == nil {
			return "", nil, errcode.New(errcode.InvalidArgument, "hold_key needs key and duration_ms")
		}
		act.Action, act.Keys, act.DurationMS = "hold_key", *p.Key, *p.DurationMS
	case "drag":
		act.Action, act.Button = "drag", button("left")
	case "type":
		if p.Text == nil {
			return "", nil, errcode.New(errcode.InvalidArgument, "type needs text")
		}
		act.Action, act.Text = "type", *p.Text
	case "key":
		if p.Key == nil {
			return "", nil, errcode.New(errcode.InvalidArgument, "key needs key")
		}
		act.Action, act.Keys = "key", *p.Key
	case "scroll":
		act.Action = "scroll"
		dir := p.Direction
		if dir == nil {
			dir = p.ScrollDirection
		}
		n := 3
		if p.Clicks != nil {
			n = *p.Clicks
		} else if p.ScrollAmount != nil {
			n = *p.ScrollAmount
		}
		// Bounded before multiplying: 120 wheel units a notch.
		if dir == nil || n <= 0 || n > maxScroll {
			return "", nil, errcode.New(errcode.InvalidArgument, "scroll needs a direction and an amount of 1 to %d", maxScroll)
		}
		switch *dir {
		case "down":
			act.DY = 120 * n
		case "up":
			act.DY = -120 * n
		case "right":
			act.DX = 120 * n
		case "left":
			act.DX = -120 * n
		default:
			return "", nil, errcode.New(errcode.InvalidArgument, "scroll direction must be up, down, left or right")
		}
	default:
		return "", nil, errcode.New(errcode.FeatureNotSupported, "INPUT_ACTION %q is not supported", textsafe.Clip(p.Action, 32))
	}
	obs, err := d.observe(ctx, r, desktopapi.ObserveArgs{Monitor: ptr(-1), MaxEdge: desktopapi.MaxMaxEdge, Format: "jpeg", Quality: 10})
	if err != nil {
		return "", nil, err
	}
	inImage := func(pt [2]int) ([2]int, error) {
		x, y := toImage(obs, pt[0], pt[1])
		if x < 0 || y < 0 || x >= obs.Image.Width || y >= obs.Image.Height {
			return pt, errcode.New(errcode.InputOutOfBounds, "coordinate (%d, %d) is outside the union of connected display bounds", pt[0], pt[1]).
				With("requested_coordinate", pt).With("displays", displayRects(obs))
		}
		return [2]int{x, y}, nil
	}
	if p.Coordinate != nil {
		pt, err := inImage(*p.Coordinate)
		if err != nil {
			return "", nil, err
		}
		act.X, act.Y = &pt[0], &pt[1]
	}
	if p.Action == "drag" {
		if len(p.Path) < 2 {
			return "", nil, errcode.New(errcode.InvalidArgument, "drag needs a path of at least two points")
		}
		for _, q := range p.Path {
			pt, err := inImage(q)
			if err != nil {
				return "", nil, err
			}
			act.Path = append(act.Path, pt)
		}
	}
	act.ObservationID = obs.ObservationID
	out, err := r.call(ctx, act)
	if err != nil {
		return "", nil, err
	}
	rc := out.(desktopapi.ActResult).Receipt
	if rc.Status != desktopapi.Accepted {
		if rc.Error != nil {
			return "", nil, rc.Error
		}
		return "", nil, errcode.New(errcode.Internal, "the input was %s", rc.Status).With("receipt", rc.Status)
	}
	return wire.TypeAck, wire.AckPayload{OK: true}, nil
}

// maxScroll bounds an INPUT_ACTION scroll's notches.
const maxScroll = 1000

func (d *dataChannel) displayInfo(ctx context.Context, r *request) (string, any, error) {
	mons, err := d.monitors(ctx, r)
	if err != nil {
		return "", nil, err
	}
	out := make([]wire.DisplayInfo, 0, len(mons))
	for i, m := range mons {
		s := m.Scale
		if s <= 0 {
			s = 1
		}
		out = append(out, wire.DisplayInfo{Index: i, Primary: m.Primary, Scale: s, Origin: [2]int{m.Bounds.X, m.Bounds.Y},
			LogicalSize:  [2]int{m.Bounds.W, m.Bounds.H},
			PhysicalSize: [2]int{int(float64(m.Bounds.W) * s), int(float64(m.Bounds.H) * s)}})
	}
	return wire.TypeDisplayInfoResponse, wire.DisplayInfoResponse{Monitors: out}, nil
}

func (d *dataChannel) cursorPosition(ctx context.Context, r *request) (string, any, error) {
	// A small observation for the pointer: no screenshot a budget counts.
	obs, err := d.observe(ctx, r, desktopapi.ObserveArgs{Monitor: ptr(-1), MaxEdge: desktopapi.MaxMaxEdge, Format: "jpeg", Quality: 10, Cursor: true})
	if err != nil {
		return "", nil, err
	}
	if obs.Cursor == nil {
		return "", nil, errcode.New(errcode.DependencyMissing, "the pointer position is not available")
	}
	x, y := toDisplay(obs, obs.Cursor.X, obs.Cursor.Y)
	mon := 0
	for i, m := range obs.Monitors {
		b := m.Bounds
		if obs.Cursor.X >= b.X && obs.Cursor.X < b.X+b.W && obs.Cursor.Y >= b.Y && obs.Cursor.Y < b.Y+b.H {
			mon = i
		}
	}
	return wire.TypeCursorPositionResponse, wire.CursorPositionResponse{X: x, Y: y, Monitor: mon}, nil
}

// features lists HELLO's computer_use_features and coarse buckets: the
// protocol's feature flags for what this connection's registry serves and
// the desktop can do on this host (Runtime.Supports).
func (d *dataChannel) features() (fine, coarse []string) {
	has := func(op string) bool {
		_, ok := d.rt.Registry.LookupFor(audit.Link, op)
		return ok && (d.rt.Supports == nil || d.rt.Supports(op))
	}
	if !d.rt.Computer || !has(desktopapi.OpObserve) {
		return nil, nil
	}
	fine = []string{"screenshot.region", "input.click.modifiers", "input.click.button", "input.drag.path",
		"input.key.hold", "input.mouse.down_up", "input.scroll.amount", "input.wait", "cursor.position", "display.info"}
	coarse = []string{"screenshot", "input"}
	if has(desktopapi.OpWindows) {
		fine = append(fine, "screenshot.window", "window.list", "window.focus")
		coarse = append(coarse, "windows")
	}
	if has(desktopapi.OpApps) {
		fine = append(fine, "app.list")
		if has(desktopapi.OpLaunchApp) {
			fine = append(fine, "app.launch")
		}
		coarse = append(coarse, "apps")
	}
	if has(desktopapi.OpClipboardRead) && has(desktopapi.OpClipboardWrite) {
		fine = append(fine, "clipboard.read", "clipboard.write")
		coarse = append(coarse, "clipboard")
	}
	if has(desktopapi.OpPermissions) {
		fine = append(fine, "permissions.check")
		coarse = append(coarse, "permissions")
	}
	return fine, coarse
}
