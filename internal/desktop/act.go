package desktop

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/hostlink/hostlink/internal/desktop/native"
	"github.com/hostlink/hostlink/internal/desktopapi"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
)

// maxSettle bounds the wait before an act's fresh observation.
const maxSettle = 5 * time.Second

// maxTextRunes bounds one type action.
const maxTextRunes = 4096

func (s *Service) act(ctx context.Context, c *ops.Call, a desktopapi.ActArgs) (*desktopapi.ActResult, error) {
	// Validate against the reference without consuming it: bad input
	// loses nothing.
	o, err := s.refs.get(a.ObservationID, c.Transport, s.opts.now())
	if err != nil {
		return nil, err
	}
	settle := s.opts.Settle
	if a.SettleMS != nil {
		if *a.SettleMS < 0 || time.Duration(*a.SettleMS)*time.Millisecond > maxSettle {
			return nil, errcode.New(errcode.InvalidArgument, "settle_ms must be 0-5000")
		}
		settle = time.Duration(*a.SettleMS) * time.Millisecond
	}
	steps, win, err := plan(a, o)
	if err != nil {
		return nil, err
	}
	d, err := s.desk(ctx, o.desktop)
	if err != nil {
		return nil, err
	}
	// What the backend could never send is refused before the reference
	// is consumed.
	if c, ok := d.b.(native.Checker); ok && a.Action != "focus" {
		if err := c.CheckSteps(steps); err != nil {
			return nil, notDispatched(nativeErr(err, "checking the input"), len(steps))
		}
	}
	if err := d.lock(ctx); err != nil {
		return nil, err
	}
	defer d.unlock()
	// Consume inside the queue: of two acts racing on one reference,
	// exactly one goes on.
	if o, err = s.refs.consume(a.ObservationID, c.Transport, s.opts.now()); err != nil {
		return nil, err
	}
	c.Detail("desktop", o.desktop)
	c.Detail("action", a.Action)
	c.Detail("on_observation", o.id)
	auditInput(c, a)
	// A target window that went away is checked before drift: its closing
	// may itself move the focus (the window manager's fallback runs
	// whenever it gets to it), and the answer must name the gone window,
	// not depend on that timing.
	if a.Action == "focus" {
		if err := s.checkWindow(ctx, d, win); err != nil {
			return nil, err
		}
	}
	if err := s.checkDrift(ctx, d, o, max(1, len(steps))); err != nil {
		return nil, err
	}
	res := &desktopapi.ActResult{Receipt: desktopapi.Receipt{Steps: max(1, len(steps))}}
	if a.Action == "focus" {
		if err := d.b.Focus(ctx, win); err != nil {
			if !uncertain(err) {
				s.refs.release(o.id) // refused before anything was sent
			}
			return nil, notDispatched(nativeErr(err, "focusing the window"), res.Receipt.Steps)
		}
		res.Receipt.Status, res.Receipt.Dispatched = desktopapi.Accepted, 1
	} else {
		n, err := d.b.Dispatch(ctx, steps)
		res.Receipt.Dispatched = n
		switch {
		case err == nil:
			res.Receipt.Status = desktopapi.Accepted
		case n == 0 && !uncertain(err):
			// The backend refused before sending anything: the
			// observation still shows the desktop as it is.
			s.refs.release(o.id)
			return nil, notDispatched(nativeErr(err, "dispatching input"), len(steps))
		case n == 0:
			res.Receipt.Status, res.Receipt.Error = desktopapi.Unknown, nativeErr(err, "dispatching input")
		default:
			res.Receipt.Status, res.Receipt.Error = desktopapi.Partial, nativeErr(err, "dispatching input")
		}
	}
	c.Detail("receipt", res.Receipt.Status)
	// The fresh observation: same framing as the one consumed. Its failure
	// is reported beside the receipt, which stands.
	select {
	case <-time.After(settle):
	case <-ctx.Done():
		res.ObservationError = errcode.As(ctx.Err())
		return res, nil
	}
	fr := framing{rect: o.frame.Origin, scale: o.frame.Scale, monitor: o.monitor, maxEdge: o.maxEdge}
	obs, err := s.capture(ctx, c, d, fr, desktopapi.ObserveArgs{})
	if err != nil {
		res.ObservationError = errcode.As(err)
	} else {
		res.Observation = obs
	}
	return res, nil
}

// uncertain reports whether an error may have come after the OS took the
// input (a lost connection, a cancelled wait), as opposed to a refusal
// before sending anything.
func uncertain(err error) bool {
	return !errors.Is(err, native.ErrUnmappedKey) && !errors.Is(err, native.ErrNotSupported) &&
		!errors.Is(err, native.ErrPermission) && !errors.Is(err, native.ErrSecureDesktop)
}

func notDispatched(e *errcode.Error, steps int) *errcode.Error {
	return e.With("receipt", desktopapi.Receipt{Status: desktopapi.NotDispatched, Steps: steps})
}

// checkDrift refuses the act of steps input steps if the session, the
// monitors or the focused window changed since the observation; its
// receipt says that none of them was dispatched.
func (s *Service) checkDrift(ctx context.Context, d *desk, o *observation, steps int) error {
	cur, err := d.b.State(ctx)
	if err != nil {
		s.drop(d, err)
		return notDispatched(nativeErr(err, "reading the desktop state"), steps)
	}
	var what []string
	if cur.Session != o.state.Session {
		what = append(what, "session")
	}
	if cur.Locked {
		what = append(what, "locked")
	}
	if !slices.Equal(cur.Monitors, o.state.Monitors) {
		what = append(what, "monitors")
	}
	if cur.Focus != o.state.Focus {
		what = append(what, "focus")
	} else if cur.FocusBox != o.state.FocusBox {
		what = append(what, "focused_window_geometry")
	}
	if len(what) > 0 {
		return errcode.New(DesktopDrift, "the desktop changed since the observation (%s); nothing was dispatched; observe again",
			strings.Join(what, ", ")).With("changed", what).With("receipt", desktopapi.Receipt{Status: desktopapi.NotDispatched, Steps: steps})
	}
	return nil
}

// checkWindow re-verifies a window reference against the live window list:
// the same handle, process and application, else WINDOW_STALE.
func (s *Service) checkWindow(ctx context.Context, d *desk, w native.Window) error {
	if w.Elevated {
		return errcode.New(FeatureNotSupported, "the window belongs to an elevated process; input cannot reach it").
			With("receipt", desktopapi.Receipt{Status: desktopapi.NotDispatched, Steps: 1})
	}
	ws, err := d.b.Windows(ctx)
	if err != nil {
		return notDispatched(nativeErr(err, "listing windows"), 1)
	}
	for _, cur := range ws {
		if cur.Handle == w.Handle && cur.PID == w.PID && cur.App == w.App && cur.Created == w.Created {
			return nil
		}
	}
	return errcode.New(WindowStale, "the window no longer exists as observed; observe again").
		With("receipt", desktopapi.Receipt{Status: desktopapi.NotDispatched, Steps: 1})
}

// auditInput records what an act asked for, never what it typed: text is
// recorded as its length and a SHA-256 prefix, as the wire protocol's
// audit rules have it for INPUT_ACTION.text.
func auditInput(c *ops.Call, a desktopapi.ActArgs) {
	if a.X != nil && a.Y != nil {
		c.Detail("at", [2]int{*a.X, *a.Y})
	}
	switch a.Action {
	case "type":
		sum := sha256.Sum256([]byte(a.Text))
		c.Detail("text_bytes", len(a.Text))
		c.Detail("text_sha256_prefix", hex.EncodeToString(sum[:4]))
	case "key", "hold_key":
		c.Detail("keys", a.Keys)
	case "drag":
		c.Detail("path_points", len(a.Path))
	case "scroll":
		c.Detail("wheel", [2]int{a.DX, a.DY})
	}
}
