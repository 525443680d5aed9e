package x11

import (
	"context"
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/jezek/xgb/xproto"

	"github.com/hostlink/hostlink/internal/desktop/native"
)

// prop reads a whole property of w (up to 1 MiB).
func (b *Backend) prop(w xproto.Window, name string) (*xproto.GetPropertyReply, error) {
	a := b.atom(name)
	if a == 0 {
		return nil, fmt.Errorf("no atom %s", name)
	}
	return xproto.GetProperty(b.conn, false, w, a, xproto.GetPropertyTypeAny, 0, 1<<18).Reply()
}

func (b *Backend) propWindows(w xproto.Window, name string) []xproto.Window {
	r, err := b.prop(w, name)
	if err != nil || r.Format != 32 {
		return nil
	}
	out := make([]xproto.Window, 0, len(r.Value)/4)
	for i := 0; i+4 <= len(r.Value); i += 4 {
		out = append(out, xproto.Window(binary.LittleEndian.Uint32(r.Value[i:])))
	}
	return out
}

func (b *Backend) propCard(w xproto.Window, name string) (uint32, bool) {
	r, err := b.prop(w, name)
	if err != nil || r.Format != 32 || len(r.Value) < 4 {
		return 0, false
	}
	return binary.LittleEndian.Uint32(r.Value), true
}

// wmCheck returns the EWMH window manager's check window, or 0 when no
// EWMH window manager runs.
func (b *Backend) wmCheck() xproto.Window {
	w := b.propWindows(b.root, "_NET_SUPPORTING_WM_CHECK")
	if len(w) == 0 || w[0] == 0 {
		return 0
	}
	return w[0]
}

// active returns the top-level window holding the X input focus: the
// client the focus window belongs to (the window itself or an ancestor in
// ws, the clients), 0 when the focus is on no client (None, PointerRoot, the root
// or a window manager's own window).
//
// It reads the input focus, not EWMH's _NET_ACTIVE_WINDOW, because that
// is where keystrokes go and because the window manager publishes the
// property only after the focus moved: measured with openbox, every
// activation shows the property as old window → None → new window for a
// while after the input focus is already on the new one, so an act
// checked against the property could pass its drift check with the keys
// going elsewhere, and an observation taken in between records no focus.
func (b *Backend) active(ws []xproto.Window) xproto.Window {
	r, err := xproto.GetInputFocus(b.conn).Reply()
	if err != nil || r.Focus == b.root || r.Focus <= 1 {
		return 0
	}
	for w := r.Focus; w != 0 && w != b.root; {
		if slices.Contains(ws, w) {
			return w
		}
		t, err := xproto.QueryTree(b.conn, w).Reply()
		if err != nil {
			return 0
		}
		w = t.Parent
	}
	return 0
}

// bounds returns w's rectangle in root coordinates.
func (b *Backend) bounds(w xproto.Window) (native.Rect, error) {
	g, err := xproto.GetGeometry(b.conn, xproto.Drawable(w)).Reply()
	if err != nil {
		return native.Rect{}, err
	}
	t, err := xproto.TranslateCoordinates(b.conn, w, b.root, 0, 0).Reply()
	if err != nil {
		return native.Rect{}, err
	}
	return native.Rect{X: int(t.DstX), Y: int(t.DstY), W: int(g.Width), H: int(g.Height)}, nil
}

func (b *Backend) title(w xproto.Window) string {
	if r, err := b.prop(w, "_NET_WM_NAME"); err == nil && len(r.Value) > 0 {
		return string(r.Value)
	}
	if r, err := b.prop(w, "WM_NAME"); err == nil {
		return string(r.Value)
	}
	return ""
}

// class returns WM_CLASS's class part (the application), else its instance.
func (b *Backend) class(w xproto.Window) string {
	r, err := b.prop(w, "WM_CLASS")
	if err != nil {
		return ""
	}
	parts := strings.Split(strings.TrimRight(string(r.Value), "\x00"), "\x00")
	return parts[len(parts)-1]
}

// clients lists the managed top-level windows, bottom to top: EWMH's
// stacking list, else the root's viewable children.
func (b *Backend) clients() []xproto.Window {
	if b.wmCheck() != 0 {
		if ws := b.propWindows(b.root, "_NET_CLIENT_LIST_STACKING"); len(ws) > 0 {
			return ws
		}
		return b.propWindows(b.root, "_NET_CLIENT_LIST")
	}
	t, err := xproto.QueryTree(b.conn, b.root).Reply()
	if err != nil {
		return nil
	}
	var out []xproto.Window
	for _, w := range t.Children {
		a, err := xproto.GetWindowAttributes(b.conn, w).Reply()
		if err == nil && a.MapState == xproto.MapStateViewable && !a.OverrideRedirect {
			out = append(out, w)
		}
	}
	return out
}

func (b *Backend) window(w, focus xproto.Window) (native.Window, error) {
	box, err := b.bounds(w)
	if err != nil {
		return native.Window{}, native.ErrWindowGone
	}
	pid, _ := b.propCard(w, "_NET_WM_PID")
	nw := native.Window{
		Handle: uint64(w), PID: int(pid), Title: b.title(w), App: b.class(w),
		Bounds: box, Focused: w == focus,
	}
	if r, err := b.prop(w, "_NET_WM_STATE"); err == nil && r.Format == 32 {
		hidden := b.atom("_NET_WM_STATE_HIDDEN")
		for i := 0; i+4 <= len(r.Value); i += 4 {
			if xproto.Atom(binary.LittleEndian.Uint32(r.Value[i:])) == hidden {
				nw.Minimized = true
			}
		}
	}
	return nw, nil
}

// Windows lists the top-level windows, topmost first.
func (b *Backend) Windows(ctx context.Context) ([]native.Window, error) {
	ws := b.clients()
	focus := b.active(ws)
	out := make([]native.Window, 0, len(ws))
	for _, w := range slices.Backward(ws) {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		if nw, err := b.window(w, focus); err == nil {
			out = append(out, nw)
		}
	}
	return out, nil
}

// Focus activates w through the window manager (_NET_ACTIVE_WINDOW, as a
// pager would ask) or, without one, sets the input focus and raises it.
func (b *Backend) Focus(ctx context.Context, w native.Window) error {
	xw := xproto.Window(w.Handle)
	if _, err := xproto.GetWindowAttributes(b.conn, xw).Reply(); err != nil {
		return native.ErrWindowGone
	}
	if b.wmCheck() != 0 {
		ev := xproto.ClientMessageEvent{
			Format: 32, Window: xw, Type: b.atom("_NET_ACTIVE_WINDOW"),
			Data: xproto.ClientMessageDataUnionData32New([]uint32{2, xproto.TimeCurrentTime, 0, 0, 0}),
		}
		return xproto.SendEventChecked(b.conn, false, b.root,
			xproto.EventMaskSubstructureNotify|xproto.EventMaskSubstructureRedirect, string(ev.Bytes())).Check()
	}
	if err := xproto.ConfigureWindowChecked(b.conn, xw, xproto.ConfigWindowStackMode, []uint32{xproto.StackModeAbove}).Check(); err != nil {
		return err
	}
	return xproto.SetInputFocusChecked(b.conn, xproto.InputFocusPointerRoot, xw, xproto.TimeCurrentTime).Check()
}

// Cursor returns the pointer position on the root window.
func (b *Backend) Cursor(ctx context.Context) (int, int, error) {
	r, err := xproto.QueryPointer(b.conn, b.root).Reply()
	if err != nil {
		return 0, 0, err
	}
	return int(r.RootX), int(r.RootY), nil
}

// State is the drift snapshot: the display's identity (server, release and
// window manager instance), the monitors and the focused window.
func (b *Backend) State(ctx context.Context) (native.State, error) {
	mons, err := b.Monitors(ctx)
	if err != nil {
		return native.State{}, err
	}
	st := native.State{
		Session:  fmt.Sprintf("%s|%s|%d|wm:%d|root:%d", b.display, b.setup.Vendor, b.setup.ReleaseNumber, b.wmCheck(), b.root),
		Monitors: mons,
		Locked:   b.sessionLocked(ctx),
	}
	if f := b.active(b.clients()); f != 0 {
		st.Focus = uint64(f)
		st.FocusBox, _ = b.bounds(f)
	}
	return st, nil
}
