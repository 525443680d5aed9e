package link

import (
	"context"
	"sync"

	"github.com/hostlink/hostlink/internal/desktopapi"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/link/wire"
	"github.com/hostlink/hostlink/internal/textsafe"
)

// Windows: WINDOW_LIST_REQUEST, WINDOW_FOCUS and a screenshot's window_id,
// converted to and from computer_windows and computer_focus_window.

// windowTable holds the window ids handed out on a connection. The
// protocol wipes window ids on every HELLO: an id listed on an earlier
// connection is WINDOW_STALE here even though the desktop service still
// knows it.
type windowTable struct {
	mu    sync.Mutex
	epoch int
	ids   map[string]bool
}

func (t *windowTable) add(epoch int, ids []string) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.epoch != epoch || t.ids == nil {
		t.epoch, t.ids = epoch, map[string]bool{}
	}
	for _, id := range ids {
		t.ids[id] = true
	}
}

func (t *windowTable) has(epoch int, id string) bool {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.epoch == epoch && t.ids[id]
}

// window resolves a wire window id handed out on this connection to the
// service's current view of it (re-verified there: WINDOW_STALE if gone).
func (d *dataChannel) window(ctx context.Context, r *request, id string) (desktopapi.ListedWindow, error) {
	if !d.winIDs.has(d.c.State().Connects, id) {
		return desktopapi.ListedWindow{}, staleWindow(id)
	}
	out, err := r.helper(ctx, desktopapi.OpWindows, desktopapi.WindowsArgs{WindowID: id})
	if err != nil {
		return desktopapi.ListedWindow{}, err
	}
	res := out.(desktopapi.WindowsResult)
	if len(res.Windows) != 1 {
		return desktopapi.ListedWindow{}, staleWindow(id)
	}
	return res.Windows[0], nil
}

// staleWindow is the protocol's answer to a window id this connection
// did not list (or listed before a reconnect).
func staleWindow(id string) error {
	return errcode.New(errcode.WindowStale, "window_id %s no longer maps to a live window", textsafe.Clip(id, 64)).
		With("window_id", textsafe.Clip(id, 64)).With("hint", "re-list windows")
}

func (d *dataChannel) windowList(ctx context.Context, r *request) (string, any, error) {
	p, err := wire.DecodePayload[wire.WindowListRequest](r.e)
	if err != nil {
		return "", nil, err
	}
	a := desktopapi.WindowsArgs{IncludeMinimized: p.IncludeMinimized, IncludeOffscreen: p.IncludeOffscreen}
	if p.AppBundleID != nil {
		a.App = *p.AppBundleID
	}
	out, err := r.call(ctx, a)
	if err != nil {
		return "", nil, err
	}
	res := out.(desktopapi.WindowsResult)
	resp := wire.WindowListResponse{Windows: make([]wire.WindowEntry, 0, len(res.Windows)), Truncated: res.Truncated}
	ids := make([]string, 0, len(res.Windows))
	for _, w := range res.Windows {
		b := w.Bounds
		resp.Windows = append(resp.Windows, wire.WindowEntry{WindowID: w.WindowID, PID: w.PID, AppName: w.App, AppBundleID: w.App, Title: w.Title,
			Bounds: [4]int{b.X, b.Y, b.X + b.W, b.Y + b.H}, Monitor: w.Monitor,
			IsFocused: w.Focused, IsMinimized: w.Minimized, IsFullscreen: w.Fullscreen})
		ids = append(ids, w.WindowID)
	}
	d.winIDs.add(d.c.State().Connects, ids)
	return wire.TypeWindowListResponse, resp, nil
}

func (d *dataChannel) windowFocus(ctx context.Context, r *request) (string, any, error) {
	p, err := wire.DecodePayload[wire.WindowFocus](r.e)
	if err != nil {
		return "", nil, err
	}
	if p.WindowID == "" {
		return "", nil, errcode.New(errcode.InvalidArgument, "WINDOW_FOCUS needs a window_id")
	}
	if !d.winIDs.has(d.c.State().Connects, p.WindowID) {
		return "", nil, staleWindow(p.WindowID)
	}
	out, err := r.call(ctx, desktopapi.FocusWindowArgs{WindowID: p.WindowID})
	if err != nil {
		return "", nil, err
	}
	return wire.TypeAck, wire.WindowFocused{OK: true, Focused: out.(desktopapi.FocusWindowResult).Focused}, nil
}

// CodeWindowNotVisible: the window asked for in a screenshot is minimized
// or off every display (X11 has no guaranteed off-screen bitmap).
const CodeWindowNotVisible errcode.Code = "WINDOW_NOT_VISIBLE"

// windowRegion is the display-global region [x1, y1, x2, y2] a window
// shows on the displays, for SCREENSHOT_REQUEST.window_id.
func (d *dataChannel) windowRegion(ctx context.Context, r *request, id string) ([4]int, error) {
	w, err := d.window(ctx, r, id)
	if err != nil {
		return [4]int{}, err
	}
	mons, err := d.monitors(ctx, r)
	if err != nil {
		return [4]int{}, err
	}
	var reg [4]int
	found := false
	b := w.Bounds
	for _, m := range mons {
		mb := m.Bounds
		x1, y1 := max(b.X, mb.X), max(b.Y, mb.Y)
		x2, y2 := min(b.X+b.W, mb.X+mb.W), min(b.Y+b.H, mb.Y+mb.H)
		if x2 <= x1 || y2 <= y1 {
			continue
		}
		if !found {
			reg, found = [4]int{x1, y1, x2, y2}, true
			continue
		}
		reg = [4]int{min(reg[0], x1), min(reg[1], y1), max(reg[2], x2), max(reg[3], y2)}
	}
	if !found || w.Minimized {
		return [4]int{}, errcode.New(CodeWindowNotVisible, "window %s is minimized or off every display", textsafe.Clip(id, 64)).With("window_id", textsafe.Clip(id, 64))
	}
	return reg, nil
}
