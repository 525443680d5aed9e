package desktop

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/desktop/native"
	"github.com/hostlink/hostlink/internal/desktopapi"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
)

// maxWindowIDs bounds the window ids a Service remembers; past it the
// oldest are forgotten (and then refused as WINDOW_STALE).
const maxWindowIDs = 4096

// maxListedWindows bounds one computer_windows result.
const maxListedWindows = 500

func init() {
	ops.AddDescribed(&computerOps, spec(desktopapi.OpWindows, "List windows",
		"The desktop's top-level windows (native coordinates) with opaque window ids for computer_focus_window. An id never names another window: it is re-verified (same handle, process, application) before each use, else WINDOW_STALE.",
		policy.ComputerObserve, ops.Spec{NoAsk: true, ReadOnly: true}), (*Service).describeWindows, value((*Service).windows))
}

// describeWindows describes the request to the policy.
func (*Service) describeWindows(a desktopapi.WindowsArgs, dc policy.DescribeContext) (policy.Action, error) {
	return describeArgs(dc, a.Desktop, a), nil
}

func init() {
	ops.AddDescribed(&computerOps, spec(desktopapi.OpFocusWindow, "Focus a window",
		"Activate and raise a window listed by computer_windows, through the window manager. Returns a receipt and whether the window was focused afterwards.",
		policy.Computer, ops.Spec{Idempotent: true}), (*Service).describeFocusWindow, value((*Service).focusWindow))
}

// describeFocusWindow describes the request to the policy.
func (*Service) describeFocusWindow(a desktopapi.FocusWindowArgs, dc policy.DescribeContext) (policy.Action, error) {
	return describeArgs(dc, "", a), nil
}

// windowIDs maps minted window ids to the window they were minted for. An
// id is re-verified against the live window list before every use: the
// same handle, process, application and creation stamp, else WINDOW_STALE.
type windowIDs struct {
	mu    sync.Mutex
	byID  map[string]*windowRecord
	byKey map[windowKey]string
	order []string // oldest first
}

type windowKey struct {
	transport audit.Transport
	desktop   string
	handle    uint64
	pid       int
	app       string
	created   int64
}

type windowRecord struct {
	key windowKey
	w   native.Window
}

func keyOf(transport audit.Transport, desktop string, w native.Window) windowKey {
	return windowKey{transport, desktop, w.Handle, w.PID, w.App, w.Created}
}

// mint returns the id of w for transport: the same id while the same
// window lives, a new one for anything else.
func (t *windowIDs) mint(transport audit.Transport, desktop string, w native.Window) string {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.byID == nil {
		t.byID, t.byKey = make(map[string]*windowRecord), make(map[windowKey]string)
	}
	k := keyOf(transport, desktop, w)
	if id, ok := t.byKey[k]; ok {
		t.byID[id].w = w
		return id
	}
	id := newID("win_")
	t.byID[id], t.byKey[k] = &windowRecord{key: k, w: w}, id
	t.order = append(t.order, id)
	if len(t.order) > maxWindowIDs {
		old := t.order[0]
		t.order = t.order[1:]
		if r, ok := t.byID[old]; ok {
			delete(t.byKey, r.key)
			delete(t.byID, old)
		}
	}
	return id
}

// lookup returns the record of id if transport minted it.
func (t *windowIDs) lookup(transport audit.Transport, id string) (windowRecord, bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	r, ok := t.byID[id]
	if !ok || r.key.transport != transport {
		return windowRecord{}, false
	}
	return *r, true
}

func staleWindow(id string) *errcode.Error {
	return errcode.New(WindowStale, "window_id %s no longer maps to a live window", trunc(id)).
		With("window_id", trunc(id)).With("hint", "re-list windows")
}

// live re-verifies a window record against the desktop's current windows
// and returns the current state of that window.
func live(ctx context.Context, d *desk, id string, r windowRecord) (native.Window, error) {
	ws, err := d.b.Windows(ctx)
	if err != nil {
		return native.Window{}, nativeErr(err, "listing windows")
	}
	for _, cur := range ws {
		if keyOf(r.key.transport, r.key.desktop, cur) == r.key {
			return cur, nil
		}
	}
	return native.Window{}, staleWindow(id)
}

func (s *Service) windows(ctx context.Context, c *ops.Call, a desktopapi.WindowsArgs) (*desktopapi.WindowsResult, error) {
	deskID := a.Desktop
	var rec windowRecord
	if a.WindowID != "" {
		var ok bool
		if rec, ok = s.more.windows.lookup(c.Transport, a.WindowID); !ok {
			return nil, staleWindow(a.WindowID)
		}
		deskID = rec.key.desktop
	}
	d, err := s.desk(ctx, deskID)
	if err != nil {
		return nil, err
	}
	if err := d.lock(ctx); err != nil {
		return nil, errcode.As(err)
	}
	defer d.unlock()
	if st := d.b.Status(ctx); !st.Windows.Ready {
		return nil, errcode.New(FeatureNotSupported, "windows cannot be listed here: %s", st.Windows.Detail).With("reason", st.Windows.Reason)
	}
	mons, err := d.b.Monitors(ctx)
	if err != nil {
		return nil, nativeErr(err, "reading the monitors")
	}
	var ws []native.Window
	if a.WindowID != "" {
		w, err := live(ctx, d, a.WindowID, rec)
		if err != nil {
			return nil, err
		}
		ws = []native.Window{w}
	} else if ws, err = d.b.Windows(ctx); err != nil {
		return nil, nativeErr(err, "listing windows")
	}
	res := &desktopapi.WindowsResult{Desktop: d.b.ID(), CoordinateSpace: d.b.Space(), Windows: []desktopapi.ListedWindow{}}
	for _, w := range ws {
		lw := listed(w, mons)
		if a.WindowID == "" {
			if (w.Minimized && !a.IncludeMinimized) || (lw.Monitor < 0 && !w.Minimized && !a.IncludeOffscreen) ||
				(a.App != "" && !strings.EqualFold(a.App, w.App)) {
				continue
			}
		}
		if len(res.Windows) == maxListedWindows {
			res.Truncated = true
			break
		}
		lw.WindowID = s.more.windows.mint(c.Transport, d.b.ID(), w)
		res.Windows = append(res.Windows, lw)
	}
	c.Detail("desktop", d.b.ID())
	c.Detail("windows", len(res.Windows))
	return res, nil
}

// listed describes w with the monitor holding its centre.
func listed(w native.Window, mons []native.Monitor) desktopapi.ListedWindow {
	lw := desktopapi.ListedWindow{Title: w.Title, App: w.App, PID: w.PID, Bounds: w.Bounds, Monitor: -1,
		Focused: w.Focused, Minimized: w.Minimized, Elevated: w.Elevated}
	cx, cy := w.Bounds.X+w.Bounds.W/2, w.Bounds.Y+w.Bounds.H/2
	for i, m := range mons {
		if m.Bounds.Contains(cx, cy) {
			lw.Monitor = i
			lw.Fullscreen = w.Bounds == m.Bounds
			break
		}
	}
	if lw.Monitor < 0 {
		for i, m := range mons {
			if !m.Bounds.Intersect(w.Bounds).Empty() {
				lw.Monitor = i
				break
			}
		}
	}
	return lw
}

// focusSettle is how long computer_focus_window waits before checking
// that the window manager gave the window the focus.
const focusSettle = 300 * time.Millisecond

func (s *Service) focusWindow(ctx context.Context, c *ops.Call, a desktopapi.FocusWindowArgs) (*desktopapi.FocusWindowResult, error) {
	rec, ok := s.more.windows.lookup(c.Transport, a.WindowID)
	if !ok {
		return nil, staleWindow(a.WindowID)
	}
	d, err := s.desk(ctx, rec.key.desktop)
	if err != nil {
		return nil, err
	}
	if err := d.lock(ctx); err != nil {
		return nil, errcode.As(err)
	}
	defer d.unlock()
	c.Detail("desktop", d.b.ID())
	w, err := live(ctx, d, a.WindowID, rec)
	if err != nil {
		return nil, notDispatched(errcode.As(err), 1)
	}
	c.Detail("window", fmt.Sprintf("%q (%s)", trunc(w.Title), w.App))
	if w.Elevated {
		return nil, notDispatched(errcode.New(FeatureNotSupported, "the window belongs to an elevated process; it cannot be focused from here"), 1)
	}
	if err := d.b.Focus(ctx, w); err != nil {
		return nil, notDispatched(nativeErr(err, "focusing the window"), 1)
	}
	res := &desktopapi.FocusWindowResult{Receipt: desktopapi.Receipt{Status: desktopapi.Accepted, Steps: 1, Dispatched: 1}}
	// Report what the desktop shows, not what was asked: poll briefly for
	// the window manager to act.
	deadline := time.Now().Add(focusSettle * 5)
	for {
		if st, err := d.b.State(ctx); err == nil && st.Focus == w.Handle {
			res.Focused = true
			break
		}
		if time.Now().After(deadline) {
			break
		}
		select {
		case <-ctx.Done():
			return res, nil
		case <-time.After(focusSettle / 6):
		}
	}
	c.Detail("focused", res.Focused)
	return res, nil
}
