package link

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"time"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
)

// Computer-use messages of protocol v1.1 that hostlink maps onto the
// computer_* operations. The others (windows, apps, clipboard,
// permissions) are FEATURE_NOT_SUPPORTED when computer_use is granted.
const (
	TypeScreenshotRequest      = "SCREENSHOT_REQUEST"
	TypeScreenshotResponse     = "SCREENSHOT_RESPONSE"
	TypeInputAction            = "INPUT_ACTION"
	TypeDisplayInfoRequest     = "DISPLAY_INFO_REQUEST"
	TypeDisplayInfoResponse    = "DISPLAY_INFO_RESPONSE"
	TypeCursorPositionRequest  = "CURSOR_POSITION_REQUEST"
	TypeCursorPositionResponse = "CURSOR_POSITION_RESPONSE"
)

// maxWait caps INPUT_ACTION "wait", as the protocol's shim does.
const maxWait = 5 * time.Second

// ScreenshotRequest is SCREENSHOT_REQUEST's payload.
type ScreenshotRequest struct {
	Monitor       *int    `json:"monitor"` // 0 primary, -1 all stitched, n the n-th
	Quality       int     `json:"quality"`
	Region        *[4]int `json:"region"` // display-global [x1, y1, x2, y2]
	WindowID      *string `json:"window_id"`
	Format        string  `json:"format"`
	IncludeCursor *bool   `json:"include_cursor"`
}

// ScreenshotResponse is SCREENSHOT_RESPONSE's payload.
type ScreenshotResponse struct {
	ImageBase64  string         `json:"image_base64"`
	MIMEType     string         `json:"mime_type"`
	Width        int            `json:"width"`
	Height       int            `json:"height"`
	Monitor      int            `json:"monitor"`
	Region       *[4]int        `json:"region"`
	DisplayScale float64        `json:"display_scale"`
	LogicalSize  [2]int         `json:"logical_size"`
	Meta         map[string]any `json:"meta"`
}

// InputAction is INPUT_ACTION's payload.
type InputAction struct {
	Action          string   `json:"action"`
	Coordinate      *[2]int  `json:"coordinate"`
	Text            *string  `json:"text"`
	Key             *string  `json:"key"`
	Direction       *string  `json:"direction"`
	Clicks          *int     `json:"clicks"`
	Button          *string  `json:"button"`
	Modifiers       []string `json:"modifiers"`
	ScrollAmount    *int     `json:"scroll_amount"`
	ScrollDirection *string  `json:"scroll_direction"`
	DurationMS      *int     `json:"duration_ms"`
	Path            [][2]int `json:"path"`
	Paste           bool     `json:"paste"`
}

// DisplayInfo is one monitor in DISPLAY_INFO_RESPONSE.
type DisplayInfo struct {
	Index        int     `json:"index"`
	Primary      bool    `json:"primary"`
	PhysicalSize [2]int  `json:"physical_size"`
	LogicalSize  [2]int  `json:"logical_size"`
	Scale        float64 `json:"scale"`
	Origin       [2]int  `json:"origin"`
}

// The computer_* results as far as the mapping reads them (decoded from
// their JSON, so this package does not depend on the desktop backends).
type (
	rect    struct{ X, Y, W, H int }
	monitor struct {
		Index   int     `json:"index"`
		Primary bool    `json:"primary"`
		Bounds  rect    `json:"bounds"`
		Scale   float64 `json:"scale"`
	}
	desktops struct {
		Desktops []struct {
			Monitors []monitor `json:"monitors"`
		} `json:"desktops"`
	}
	observation struct {
		ObservationID string `json:"observation_id"`
		Image         struct {
			Width, Height int
			Origin        [2]int  `json:"origin"`
			Scale         float64 `json:"scale"`
		} `json:"image"`
		Monitors []monitor           `json:"monitors"`
		Cursor   *struct{ X, Y int } `json:"cursor"`
	}
	actResult struct {
		Receipt struct {
			Status string         `json:"status"`
			Error  *errcode.Error `json:"error"`
		} `json:"receipt"`
	}
)

func (d *dataChannel) computerRoutes(r map[string]route) {
	r[TypeScreenshotRequest] = route{capability: CapComputerUse, handle: d.screenshot}
	r[TypeInputAction] = route{capability: CapComputerUse, handle: d.inputAction}
	r[TypeDisplayInfoRequest] = route{capability: CapComputerUse, handle: d.displayInfo}
	r[TypeCursorPositionRequest] = route{capability: CapComputerUse, handle: d.cursorPosition}
	d.moreComputerRoutes(r)
}

// callJSON runs an operation and decodes its JSON result into out; it
// returns the result's images.
func (d *dataChannel) callJSON(ctx context.Context, e *Envelope, op string, args, out any) ([]ops.Image, error) {
	res, err := d.call(ctx, e, op, args)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(res)
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, out); err != nil {
		return nil, errcode.New(errcode.Internal, "unexpected %s result", op)
	}
	return ops.ImagesOf(res), nil
}

// monitors lists the first desktop's monitors.
func (d *dataChannel) monitors(ctx context.Context, e *Envelope) ([]monitor, error) {
	var ds desktops
	if _, err := d.callJSON(ctx, e, "computer_desktops", map[string]any{}, &ds); err != nil {
		return nil, err
	}
	if len(ds.Desktops) == 0 || len(ds.Desktops[0].Monitors) == 0 {
		return nil, errcode.New(errcode.DependencyMissing, "no desktop is reachable")
	}
	return ds.Desktops[0].Monitors, nil
}

// monitorIndex maps the protocol's monitor number (0 primary, -1 all) to
// the desktop's index (-1 all).
func monitorIndex(mons []monitor, n int) (int, error) {
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

func (d *dataChannel) screenshot(ctx context.Context, e *Envelope) (string, any, error) {
	p, err := DecodePayload[ScreenshotRequest](e)
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
	if err := d.limits.screenshot(); err != nil {
		return "", nil, err
	}
	if p.WindowID != nil {
		r, err := d.windowRegion(ctx, e, *p.WindowID)
		if err != nil {
			return "", nil, err
		}
		p.Region = &r
	}
	mon := 0
	if p.Monitor != nil {
		mon = *p.Monitor
	}
	mons, err := d.monitors(ctx, e)
	if err != nil {
		return "", nil, err
	}
	idx, err := monitorIndex(mons, mon)
	if err != nil {
		return "", nil, err
	}
	args := map[string]any{"monitor": idx, "format": format, "quality": quality,
		"include_cursor": p.IncludeCursor == nil || *p.IncludeCursor}
	var obs observation
	if p.Region != nil {
		// A display-global region: observe everything, then the region
		// inside that image.
		var all observation
		if _, err := d.callJSON(ctx, e, "computer_observe", map[string]any{"monitor": -1, "format": "png"}, &all); err != nil {
			return "", nil, err
		}
		r := *p.Region
		x1, y1 := all.toImage(r[0], r[1])
		x2, y2 := all.toImage(r[2], r[3])
		if x2 <= x1 || y2 <= y1 {
			return "", nil, errcode.New(errcode.InvalidArgument, "region must be [x1, y1, x2, y2] with x2 > x1 and y2 > y1")
		}
		args = map[string]any{"region": map[string]any{"observation_id": all.ObservationID, "x": x1, "y": y1, "w": x2 - x1, "h": y2 - y1},
			"format": format, "quality": quality, "include_cursor": p.IncludeCursor == nil || *p.IncludeCursor}
	}
	imgs, err := d.callJSON(ctx, e, "computer_observe", args, &obs)
	if err != nil {
		return "", nil, err
	}
	if len(imgs) == 0 {
		return "", nil, errcode.New(errcode.Internal, "the observation has no image")
	}
	img := imgs[0]
	if limit := d.c.Limits().MaxFileSizeBytes; int64(len(img.Data)) > limit {
		return "", nil, tooLarge(int64(len(img.Data)), limit)
	}
	scale := obs.Image.Scale
	if scale <= 0 {
		scale = 1
	}
	return TypeScreenshotResponse, ScreenshotResponse{
		ImageBase64: base64.StdEncoding.EncodeToString(img.Data), MIMEType: img.MIMEType,
		Width: obs.Image.Width, Height: obs.Image.Height, Monitor: mon, Region: p.Region, DisplayScale: scale,
		LogicalSize: [2]int{int(float64(obs.Image.Width) / scale), int(float64(obs.Image.Height) / scale)},
		Meta:        map[string]any{"origin": obs.Image.Origin, "display_id": 0},
	}, nil
}

// toImage maps display-global coordinates to the observation's image.
func (o *observation) toImage(x, y int) (int, int) {
	s := o.Image.Scale
	if s <= 0 {
		s = 1
	}
	return int(float64(x-o.Image.Origin[0]) * s), int(float64(y-o.Image.Origin[1]) * s)
}

// toDisplay maps image coordinates back to display-global ones.
func (o *observation) toDisplay(x, y int) (int, int) {
	s := o.Image.Scale
	if s <= 0 {
		s = 1
	}
	return o.Image.Origin[0] + int(float64(x)/s), o.Image.Origin[1] + int(float64(y)/s)
}

// displayRects lists the monitors' rectangles for INPUT_OUT_OF_BOUNDS, as
// the protocol's example has them: index, origin and size.
func (o *observation) displayRects() []map[string]any {
	var out []map[string]any
	for i, m := range o.Monitors {
		x, y := o.toDisplay(m.Bounds.X, m.Bounds.Y)
		x2, y2 := o.toDisplay(m.Bounds.X+m.Bounds.W, m.Bounds.Y+m.Bounds.H)
		out = append(out, map[string]any{"index": i, "origin": [2]int{x, y}, "size": [2]int{x2 - x, y2 - y}})
	}
	return out
}

// inputAction maps INPUT_ACTION onto computer_act: it observes every
// monitor (the act needs an observation), maps display-global coordinates
// into that image, and acts on it.
func (d *dataChannel) inputAction(ctx context.Context, e *Envelope) (string, any, error) {
	p, err := DecodePayload[InputAction](e)
	if err != nil {
		return "", nil, err
	}
	act := map[string]any{"settle_ms": 0}
	if len(p.Modifiers) > 0 {
		act["modifiers"] = p.Modifiers
	}
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
		dur := time.Duration(ms) * time.Millisecond
		if dur < 0 {
			return "", nil, errcode.New(errcode.InvalidArgument, "duration_ms must not be negative")
		}
		dur = min(dur, maxWait)
		select {
		case <-time.After(dur):
		case <-ctx.Done():
			return "", nil, ctx.Err()
		}
		return TypeAck, AckPayload{OK: true}, nil
	case "left_click", "right_click", "middle_click", "double_click", "triple_click":
		act["action"] = "click"
		act["button"] = map[string]string{"right_click": "right", "middle_click": "middle"}[p.Action]
		if act["button"] == "" {
			act["button"] = button("left")
		}
		act["count"] = map[string]int{"double_click": 2, "triple_click": 3}[p.Action]
		if act["count"] == 0 {
			act["count"] = 1
		}
	case "mouse_move":
		act["action"] = "move"
	case "mouse_down", "mouse_up":
		if p.Coordinate == nil {
			return "", nil, errcode.New(errcode.InvalidArgument, "%s needs a coordinate", p.Action)
		}
		act["action"], act["button"] = p.Action, button("left")
	case "hold_key":
		if p.Key == nil || p.DurationMS == nil {
			return "", nil, errcode.New(errcode.InvalidArgument, "hold_key needs key and duration_ms")
		}
		act["action"], act["keys"], act["duration_ms"] = "hold_key", *p.Key, *p.DurationMS
	case "drag":
		act["action"] = "drag"
		act["button"] = button("left")
	case "type":
		if p.Text == nil {
			return "", nil, errcode.New(errcode.InvalidArgument, "type needs text")
		}
		act["action"], act["text"] = "type", *p.Text
	case "key":
		if p.Key == nil {
			return "", nil, errcode.New(errcode.InvalidArgument, "key needs key")
		}
		act["action"], act["keys"] = "key", *p.Key
	case "scroll":
		act["action"] = "scroll"
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
		if dir == nil || n <= 0 {
			return "", nil, errcode.New(errcode.InvalidArgument, "scroll needs a direction and a positive amount")
		}
		switch *dir {
		case "down":
			act["dy"] = 120 * n
		case "up":
			act["dy"] = -120 * n
		case "right":
			act["dx"] = 120 * n
		case "left":
			act["dx"] = -120 * n
		default:
			return "", nil, errcode.New(errcode.InvalidArgument, "scroll direction must be up, down, left or right")
		}
	default:
		return "", nil, errcode.New(errcode.FeatureNotSupported, "INPUT_ACTION %q is not supported", trunc(p.Action, 32))
	}
	var obs observation
	if _, err := d.callJSON(ctx, e, "computer_observe", map[string]any{"monitor": -1, "format": "jpeg", "quality": 10}, &obs); err != nil {
		return "", nil, err
	}
	inImage := func(pt [2]int) ([2]int, error) {
		x, y := obs.toImage(pt[0], pt[1])
		if x < 0 || y < 0 || x >= obs.Image.Width || y >= obs.Image.Height {
			return pt, errcode.New(errcode.InputOutOfBounds, "coordinate (%d, %d) is outside the union of connected display bounds", pt[0], pt[1]).
				With("requested_coordinate", pt).With("displays", obs.displayRects())
		}
		return [2]int{x, y}, nil
	}
	if p.Coordinate != nil {
		pt, err := inImage(*p.Coordinate)
		if err != nil {
			return "", nil, err
		}
		act["x"], act["y"] = pt[0], pt[1]
	}
	if p.Action == "drag" {
		if len(p.Path) < 2 {
			return "", nil, errcode.New(errcode.InvalidArgument, "drag needs a path of at least two points")
		}
		path := make([][2]int, 0, len(p.Path))
		for _, q := range p.Path {
			pt, err := inImage(q)
			if err != nil {
				return "", nil, err
			}
			path = append(path, pt)
		}
		act["path"] = path
	}
	act["observation_id"] = obs.ObservationID
	var res actResult
	if _, err := d.callJSON(ctx, e, "computer_act", act, &res); err != nil {
		return "", nil, err
	}
	if res.Receipt.Status != "accepted" {
		if res.Receipt.Error != nil {
			return "", nil, res.Receipt.Error
		}
		return "", nil, errcode.New(errcode.Internal, "the input was %s", res.Receipt.Status).With("receipt", res.Receipt.Status)
	}
	return TypeAck, AckPayload{OK: true}, nil
}

func (d *dataChannel) displayInfo(ctx context.Context, e *Envelope) (string, any, error) {
	mons, err := d.monitors(ctx, e)
	if err != nil {
		return "", nil, err
	}
	out := make([]DisplayInfo, 0, len(mons))
	for i, m := range mons {
		s := m.Scale
		if s <= 0 {
			s = 1
		}
		out = append(out, DisplayInfo{Index: i, Primary: m.Primary, Scale: s, Origin: [2]int{m.Bounds.X, m.Bounds.Y},
			LogicalSize:  [2]int{m.Bounds.W, m.Bounds.H},
			PhysicalSize: [2]int{int(float64(m.Bounds.W) * s), int(float64(m.Bounds.H) * s)}})
	}
	return TypeDisplayInfoResponse, map[string]any{"monitors": out}, nil
}

func (d *dataChannel) cursorPosition(ctx context.Context, e *Envelope) (string, any, error) {
	var obs observation
	if _, err := d.callJSON(ctx, e, "computer_observe", map[string]any{"monitor": -1, "format": "jpeg", "quality": 10, "include_cursor": true}, &obs); err != nil {
		return "", nil, err
	}
	if obs.Cursor == nil {
		return "", nil, errcode.New(errcode.DependencyMissing, "the pointer position is not available")
	}
	x, y := obs.toDisplay(obs.Cursor.X, obs.Cursor.Y)
	mon := 0
	for i, m := range obs.Monitors {
		b := m.Bounds
		if obs.Cursor.X >= b.X && obs.Cursor.X < b.X+b.W && obs.Cursor.Y >= b.Y && obs.Cursor.Y < b.Y+b.H {
			mon = i
		}
	}
	return TypeCursorPositionResponse, map[string]int{"x": x, "y": y, "monitor": mon}, nil
}
