package link

import (
	"context"
	"errors"
	"runtime"
	"sync"

	"github.com/hostlink/hostlink/internal/errcode"
)

// The computer-use messages beyond screenshots, input, cursor and display
// info, each mapped onto one computer_* operation.
const (
	TypeWindowListRequest        = "WINDOW_LIST_REQUEST"
	TypeWindowListResponse       = "WINDOW_LIST_RESPONSE"
	TypeWindowFocus              = "WINDOW_FOCUS"
	TypeAppListRequest           = "APP_LIST_REQUEST"
	TypeAppListResponse          = "APP_LIST_RESPONSE"
	TypeAppLaunch                = "APP_LAUNCH"
	TypeClipboardRead            = "CLIPBOARD_READ"
	TypeClipboardReadResponse    = "CLIPBOARD_READ_RESPONSE"
	TypeClipboardWrite           = "CLIPBOARD_WRITE"
	TypePermissionsCheckRequest  = "PERMISSIONS_CHECK_REQUEST"
	TypePermissionsCheckResponse = "PERMISSIONS_CHECK_RESPONSE"
)

// WindowListRequest is WINDOW_LIST_REQUEST's payload.
type WindowListRequest struct {
	AppBundleID      *string `json:"app_bundle_id"`
	IncludeMinimized bool    `json:"include_minimized"`
	IncludeOffscreen bool    `json:"include_offscreen"`
}

// WindowEntry is one window of WINDOW_LIST_RESPONSE. Bounds are
// display-global [x1, y1, x2, y2], like a screenshot region.
type WindowEntry struct {
	WindowID     string `json:"window_id"`
	PID          int    `json:"pid"`
	AppName      string `json:"app_name"`
	AppBundleID  string `json:"app_bundle_id"`
	Title        string `json:"title"`
	Bounds       [4]int `json:"bounds"`
	Monitor      int    `json:"monitor"`
	IsFocused    bool   `json:"is_focused"`
	IsMinimized  bool   `json:"is_minimized"`
	IsFullscreen bool   `json:"is_fullscreen"`
}

// WindowFocus is WINDOW_FOCUS's payload.
type WindowFocus struct {
	WindowID string `json:"window_id"`
	Raise    *bool  `json:"raise"`
}

// AppLaunch is APP_LAUNCH's payload. On Linux bundle_id is a desktop file
// id.
type AppLaunch struct {
	BundleID       *string  `json:"bundle_id"`
	ExecutablePath *string  `json:"executable_path"`
	Args           []string `json:"args"`
	Activate       *bool    `json:"activate"`
}

// Clipboard is CLIPBOARD_READ's and CLIPBOARD_WRITE's payload.
type Clipboard struct {
	Format  string `json:"format"`
	Content string `json:"content"`
}

// PermissionsCheck is PERMISSIONS_CHECK_REQUEST's payload.
type PermissionsCheck struct {
	Permissions []string `json:"permissions"`
}

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

func (d *dataChannel) moreComputerRoutes(r map[string]route) {
	r[TypeWindowListRequest] = route{capability: CapComputerUse, handle: d.windowList}
	r[TypeWindowFocus] = route{capability: CapComputerUse, handle: d.windowFocus}
	r[TypeAppListRequest] = route{capability: CapComputerUse, handle: d.appList}
	r[TypeAppLaunch] = route{capability: CapComputerUse, mutating: true, handle: d.appLaunch}
	r[TypeClipboardRead] = route{capability: CapComputerUse, handle: d.clipboardRead}
	r[TypeClipboardWrite] = route{capability: CapComputerUse, mutating: true, handle: d.clipboardWrite}
	r[TypePermissionsCheckRequest] = route{capability: CapComputerUse, handle: d.permissionsCheck}
}

// window resolves a wire window id handed out on this connection to the
// service's current view of it (re-verified there: WINDOW_STALE if gone).
func (d *dataChannel) window(ctx context.Context, e *Envelope, id string) (listedWindow, error) {
	if !d.winIDs.has(d.c.State().Connects, id) {
		return listedWindow{}, staleWindow(id)
	}
	var res windowsResult
	if _, err := d.callJSON(ctx, e, "computer_windows", map[string]any{"window_id": id}, &res); err != nil {
		return listedWindow{}, err
	}
	if len(res.Windows) != 1 {
		return listedWindow{}, staleWindow(id)
	}
	return res.Windows[0], nil
}

// staleWindow is the protocol's answer to a window id this connection
// did not list (or listed before a reconnect).
func staleWindow(id string) error {
	return errcode.New(errcode.WindowStale, "window_id %s no longer maps to a live window", trunc(id, 64)).
		With("window_id", trunc(id, 64)).With("hint", "re-list windows")
}

type (
	listedWindow struct {
		WindowID   string `json:"window_id"`
		Title      string `json:"title"`
		App        string `json:"app"`
		PID        int    `json:"pid"`
		Bounds     rect   `json:"bounds"`
		Monitor    int    `json:"monitor"`
		Focused    bool   `json:"focused"`
		Minimized  bool   `json:"minimized"`
		Fullscreen bool   `json:"fullscreen"`
	}
	windowsResult struct {
		Windows   []listedWindow `json:"windows"`
		Truncated bool           `json:"truncated"`
	}
)

func (d *dataChannel) windowList(ctx context.Context, e *Envelope) (string, any, error) {
	p, err := DecodePayload[WindowListRequest](e)
	if err != nil {
		return "", nil, err
	}
	args := map[string]any{"include_minimized": p.IncludeMinimized, "include_offscreen": p.IncludeOffscreen}
	if p.AppBundleID != nil {
		args["app"] = *p.AppBundleID
	}
	var res windowsResult
	if _, err := d.callJSON(ctx, e, "computer_windows", args, &res); err != nil {
		return "", nil, err
	}
	out := make([]WindowEntry, 0, len(res.Windows))
	ids := make([]string, 0, len(res.Windows))
	for _, w := range res.Windows {
		b := w.Bounds
		out = append(out, WindowEntry{WindowID: w.WindowID, PID: w.PID, AppName: w.App, AppBundleID: w.App, Title: w.Title,
			Bounds: [4]int{b.X, b.Y, b.X + b.W, b.Y + b.H}, Monitor: w.Monitor,
			IsFocused: w.Focused, IsMinimized: w.Minimized, IsFullscreen: w.Fullscreen})
		ids = append(ids, w.WindowID)
	}
	d.winIDs.add(d.c.State().Connects, ids)
	return TypeWindowListResponse, map[string]any{"windows": out, "truncated": res.Truncated}, nil
}

func (d *dataChannel) windowFocus(ctx context.Context, e *Envelope) (string, any, error) {
	p, err := DecodePayload[WindowFocus](e)
	if err != nil {
		return "", nil, err
	}
	if p.WindowID == "" {
		return "", nil, errcode.New(errcode.InvalidArgument, "WINDOW_FOCUS needs a window_id")
	}
	if !d.winIDs.has(d.c.State().Connects, p.WindowID) {
		return "", nil, staleWindow(p.WindowID)
	}
	var res struct {
		Receipt struct {
			Status string `json:"status"`
		} `json:"receipt"`
		Focused bool `json:"focused"`
	}
	if _, err := d.callJSON(ctx, e, "computer_focus_window", map[string]any{"window_id": p.WindowID}, &res); err != nil {
		return "", nil, err
	}
	return TypeAck, map[string]any{"ok": true, "focused": res.Focused}, nil
}

func (d *dataChannel) appList(ctx context.Context, e *Envelope) (string, any, error) {
	if _, err := DecodePayload[struct {
		IncludeBackground bool `json:"include_background"`
	}](e); err != nil {
		return "", nil, err
	}
	var res struct {
		Running []struct {
			PID            int    `json:"pid"`
			Name           string `json:"name"`
			AppID          string `json:"app_id"`
			ExecutablePath string `json:"executable_path"`
			Frontmost      bool   `json:"frontmost"`
			WindowCount    int    `json:"window_count"`
		} `json:"running"`
	}
	if _, err := d.callJSON(ctx, e, "computer_apps", map[string]any{}, &res); err != nil {
		return "", nil, err
	}
	apps := make([]map[string]any, 0, len(res.Running))
	for _, a := range res.Running {
		var bundle, exe any
		if a.AppID != "" {
			bundle = a.AppID
		}
		if a.ExecutablePath != "" {
			exe = a.ExecutablePath
		}
		apps = append(apps, map[string]any{"pid": a.PID, "name": a.Name, "bundle_id": bundle, "executable_path": exe,
			"is_frontmost": a.Frontmost, "window_count": a.WindowCount})
	}
	return TypeAppListResponse, map[string]any{"apps": apps}, nil
}

// MaxAppLaunchesPerMinute bounds APP_LAUNCH machine-wide, like the
// command and screenshot limits: an application is a process too.
const MaxAppLaunchesPerMinute = 10

// appLaunch admits one APP_LAUNCH.
func (r *rateLimits) appLaunch() error {
	r.mu.Lock()
	defer r.mu.Unlock()
	now := r.now()
	r.launches = recent(r.launches, now)
	if len(r.launches) >= MaxAppLaunchesPerMinute {
		return overloaded("app_launches_per_minute", MaxAppLaunchesPerMinute)
	}
	r.launches = append(r.launches, now)
	return nil
}

func (d *dataChannel) appLaunch(ctx context.Context, e *Envelope) (string, any, error) {
	p, err := DecodePayload[AppLaunch](e)
	if err != nil {
		return "", nil, err
	}
	if err := d.limits.appLaunch(); err != nil {
		return "", nil, err
	}
	args := map[string]any{"activate": p.Activate == nil || *p.Activate}
	if p.BundleID != nil {
		args["app_id"] = *p.BundleID
	}
	if p.ExecutablePath != nil {
		args["executable_path"] = *p.ExecutablePath
	}
	if len(p.Args) > 0 {
		args["args"] = p.Args
	}
	var res struct {
		PID int `json:"pid"`
	}
	if _, err := d.callJSON(ctx, e, "computer_launch_app", args, &res); err != nil {
		return "", nil, err
	}
	return TypeAck, map[string]any{"ok": true, "pid": res.PID}, nil
}

// clipboardOff turns the missing clipboard operations (the local user did
// not opt in) into the protocol's answer.
func clipboardOff(err error) error {
	var e *errcode.Error
	if errors.As(err, &e) && e.Code == errcode.UnknownOperation {
		return errcode.New(errcode.FeatureNotSupported, "clipboard access is off on this host (the local user enables it with [computer] clipboard = true)")
	}
	return err
}

func (d *dataChannel) clipboardRead(ctx context.Context, e *Envelope) (string, any, error) {
	p, err := DecodePayload[Clipboard](e)
	if err != nil {
		return "", nil, err
	}
	if p.Format != "" && p.Format != "text" {
		return "", nil, errcode.New(errcode.FeatureNotSupported, "only text clipboard content is supported")
	}
	limit := d.c.Limits().MaxFileSizeBytes
	var res struct {
		Content   string `json:"content"`
		SizeBytes int    `json:"size_bytes"`
	}
	if _, err := d.callJSON(ctx, e, "computer_clipboard_read", map[string]any{"format": "text", "max_bytes": limit}, &res); err != nil {
		var ec *errcode.Error
		if errors.As(err, &ec) && ec.Code == errcode.FileTooLarge {
			return "", nil, tooLarge(limit+1, limit)
		}
		return "", nil, clipboardOff(err)
	}
	return TypeClipboardReadResponse, map[string]any{"format": "text", "content": res.Content, "size_bytes": res.SizeBytes}, nil
}

func (d *dataChannel) clipboardWrite(ctx context.Context, e *Envelope) (string, any, error) {
	p, err := DecodePayload[Clipboard](e)
	if err != nil {
		return "", nil, err
	}
	if p.Format != "" && p.Format != "text" {
		return "", nil, errcode.New(errcode.FeatureNotSupported, "only text clipboard content is supported")
	}
	if limit := d.c.Limits().MaxFileSizeBytes; int64(len(p.Content)) > limit {
		return "", nil, tooLarge(int64(len(p.Content)), limit)
	}
	if _, err := d.call(ctx, e, "computer_clipboard_write", map[string]any{"format": "text", "content": p.Content}); err != nil {
		return "", nil, clipboardOff(err)
	}
	return TypeAck, AckPayload{OK: true}, nil
}

func (d *dataChannel) permissionsCheck(ctx context.Context, e *Envelope) (string, any, error) {
	p, err := DecodePayload[PermissionsCheck](e)
	if err != nil {
		return "", nil, err
	}
	args := map[string]any{}
	if len(p.Permissions) > 0 {
		args["permissions"] = p.Permissions
	}
	var res struct {
		Permissions map[string]string `json:"permissions"`
	}
	if _, err := d.callJSON(ctx, e, "computer_permissions", args, &res); err != nil {
		return "", nil, err
	}
	return TypePermissionsCheckResponse, map[string]any{"permissions": res.Permissions}, nil
}

// CodeWindowNotVisible: the window asked for in a screenshot is minimized
// or off every display (X11 has no guaranteed off-screen bitmap).
const CodeWindowNotVisible errcode.Code = "WINDOW_NOT_VISIBLE"

// windowRegion is the display-global region [x1, y1, x2, y2] a window
// shows on the displays, for SCREENSHOT_REQUEST.window_id.
func (d *dataChannel) windowRegion(ctx context.Context, e *Envelope, id string) ([4]int, error) {
	w, err := d.window(ctx, e, id)
	if err != nil {
		return [4]int{}, err
	}
	mons, err := d.monitors(ctx, e)
	if err != nil {
		return [4]int{}, err
	}
	var r [4]int
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
			r, found = [4]int{x1, y1, x2, y2}, true
			continue
		}
		r = [4]int{min(r[0], x1), min(r[1], y1), max(r[2], x2), max(r[3], y2)}
	}
	if !found || w.Minimized {
		return [4]int{}, errcode.New(CodeWindowNotVisible, "window %s is minimized or off every display", trunc(id, 64)).With("window_id", trunc(id, 64))
	}
	return r, nil
}

// features lists HELLO's computer_use_features and coarse buckets: the
// protocol's feature flags for what this connection's registry serves.
// Window, application and clipboard features follow the operations the
// daemon registered (the clipboard only with the local opt-in, and not on
// macOS yet); launching is not implemented on macOS yet.
func (d *dataChannel) features() (fine, coarse []string) {
	has := func(op string) bool { _, ok := d.rt.Registry.Lookup(op); return ok }
	if !d.rt.Computer || !has("computer_observe") {
		return nil, nil
	}
	fine = []string{"screenshot.region", "input.click.modifiers", "input.click.button", "input.drag.path",
		"input.key.hold", "input.mouse.down_up", "input.scroll.amount", "input.wait", "cursor.position", "display.info"}
	coarse = []string{"screenshot", "input"}
	if has("computer_windows") {
		fine = append(fine, "screenshot.window", "window.list", "window.focus")
		coarse = append(coarse, "windows")
	}
	if has("computer_apps") {
		fine = append(fine, "app.list")
		if runtime.GOOS != "darwin" {
			fine = append(fine, "app.launch")
		}
		coarse = append(coarse, "apps")
	}
	if has("computer_clipboard_read") && runtime.GOOS != "darwin" {
		fine = append(fine, "clipboard.read", "clipboard.write")
		coarse = append(coarse, "clipboard")
	}
	if has("computer_permissions") {
		fine = append(fine, "permissions.check")
		coarse = append(coarse, "permissions")
	}
	return fine, coarse
}
