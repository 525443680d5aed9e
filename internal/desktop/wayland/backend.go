//go:build linux

package wayland

import (
	"context"
	"errors"
	"fmt"
	"image"
	"sync"
	"time"

	"github.com/godbus/dbus/v5"

	"github.com/hostlink/hostlink/internal/desktop/atspi"
	"github.com/hostlink/hostlink/internal/desktop/native"
)

// Config names the Wayland session to reach: the values of the session's
// WAYLAND_DISPLAY, DBUS_SESSION_BUS_ADDRESS and XDG_RUNTIME_DIR.
type Config struct {
	Display    string
	Bus        string
	RuntimeDir string
	// ConsentTimeout is how long the portal's dialog may stay open before
	// hostlink withdraws its request (default 5 minutes); the next
	// observation asks again.
	ConsentTimeout time.Duration
	// ConsentGrace is how long an observation waits for the portal's
	// answer before it reports permission_pending (default 2 s): long
	// enough for a portal that answers without a dialog (a restore
	// token, screenshots), short enough not to hold the caller. Where
	// only the person can answer, an observation does not wait at all.
	ConsentGrace time.Duration
}

// Reason codes of Status and of refusals.
const (
	ReasonNoBus           = "no_session_bus"
	ReasonPortalMissing   = "portal_missing"
	ReasonRemoteMissing   = "remote_desktop_unavailable"
	ReasonCastMissing     = "screencast_unavailable"
	ReasonGstMissing      = "gstreamer_missing"
	ReasonPipewiresrc     = "pipewiresrc_missing"
	ReasonPipewireTools   = "pipewire_tools_missing"
	ReasonPending         = "permission_pending"
	ReasonDenied          = "permission_denied"
	ReasonClosed          = "portal_session_closed"
	ReasonFreshFrame      = "linux_pipewire_fresh_frame_unavailable"
	ReasonCaptureTimeout  = "capture_timeout"
	ReasonNoWindowList    = "wayland_no_window_list"
	ReasonSessionLocked   = "session_locked"
	ReasonPortalFailed    = "portal_failed"
	ReasonConsentTimedOut = "permission_timeout"
	// ReasonStreamLost: the shared stream's PipeWire node went away
	// without the portal closing the session (watch.go).
	ReasonStreamLost = "stream_lost"
)

// phase is where the person's consent stands.
type phase int

const (
	idle    phase = iota // not asked yet in this daemon's life (or asked again after a closed session)
	pending              // the portal's dialog is open
	granted              // a session runs
	denied               // the person declined: not asked again until hostlink restarts
	closed               // the compositor closed the session, or its stream was lost; the next observation asks again
	failed               // the portal failed the request or the dialog timed out; the next observation asks again
)

// Backend is one Wayland session reached through the portals.
type Backend struct {
	cfg    Config
	portal *portal
	deps   deps

	mu       sync.Mutex
	phase    phase
	sess     *session      // the current session (granted), or the closed one
	gens     int           // sessions opened so far
	opening  chan struct{} // closed when the running open finishes
	token    string        // restore token of the last session, where the portal gives one
	why      string        // detail of the last failure or closure
	reason   string        // reason code of the last failure
	closing  bool
	openStop context.CancelFunc
}

// Open connects to the session bus of cfg and probes the portal and
// GStreamer. A missing dependency is not an error: Status reports it per
// capability.
func Open(ctx context.Context, cfg Config) (*Backend, error) {
	if cfg.ConsentTimeout <= 0 {
		cfg.ConsentTimeout = 5 * time.Minute
	}
	if cfg.ConsentGrace <= 0 {
		cfg.ConsentGrace = 2 * time.Second
	}
	b := &Backend{cfg: cfg}
	if cfg.Bus != "" {
		p, err := dialPortal(ctx, cfg.Bus)
		if err != nil {
			return nil, fmt.Errorf("%w: session bus: %v", native.ErrUnavailable, err)
		}
		b.portal = p
	}
	b.deps = probe(ctx, b.portal)
	return b, nil
}

// ID names the desktop by its Wayland display.
func (b *Backend) ID() string { return "wayland:" + b.cfg.Display }

// Space: the compositor's logical pixels.
func (b *Backend) Space() string { return "pixels" }

// Close ends the portal session and the bus connection.
func (b *Backend) Close() error {
	b.mu.Lock()
	b.closing = true
	stop, s := b.openStop, b.sess
	ph := b.phase
	b.mu.Unlock()
	if stop != nil {
		stop()
	}
	if s != nil {
		s.stopWatch()
	}
	if b.portal != nil {
		if s != nil && ph == granted && !s.shot {
			b.portal.closeSession(s.handle)
		}
		b.portal.close()
	}
	return nil
}

// Begin opens a session if none runs, asking the person through the
// portal's dialog. Where the portal may answer without the person (a
// restore token, screenshots) it waits up to ConsentGrace for the answer;
// where only the person can answer (a dialog shown now, or one already
// open) nothing changes within the grace, and it answers at once.
func (b *Backend) Begin(ctx context.Context) error {
	if r := b.deps.capture(); !r.Ready {
		return native.Refuse(native.ErrUnavailable, r.Reason, r.Detail)
	}
	b.mu.Lock()
	mayWait := false
	switch b.phase {
	case granted:
		b.mu.Unlock()
		return nil
	case denied:
		b.mu.Unlock()
		return b.refusal()
	case idle, closed, failed:
		mayWait = b.token != "" || b.deps.screenshotOnly()
		b.startOpen()
	}
	if !mayWait {
		defer b.mu.Unlock()
		if b.phase == granted {
			return nil
		}
		return b.refusal()
	}
	wait := b.opening
	b.mu.Unlock()
	t := time.NewTimer(b.cfg.ConsentGrace)
	defer t.Stop()
	select {
	case <-wait:
	case <-t.C:
	case <-ctx.Done():
		return ctx.Err()
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.phase == granted {
		return nil
	}
	return b.refusal()
}

// startOpen runs the portal sequence in the background, so that a dialog
// the person has not answered yet outlives the request that opened it.
// Called with b.mu held.
func (b *Backend) startOpen() {
	if b.closing {
		return
	}
	if old := b.sess; old != nil && b.phase == closed && !old.shot {
		// A session whose stream was lost is still open at the portal
		// (closing one the compositor closed is harmless): end it before
		// asking for the next, so it offers no input and shows no
		// sharing indicator.
		go b.portal.closeSession(old.handle)
	}
	b.phase = pending
	done := make(chan struct{})
	b.opening = done
	ctx, cancel := context.WithTimeout(context.Background(), b.cfg.ConsentTimeout)
	b.openStop = cancel
	remote := b.deps.remoteVersion > 0 && b.deps.devices&(deviceKeyboard|devicePointer) == deviceKeyboard|devicePointer
	shot := b.deps.screenshotOnly()
	token := b.token
	go func() {
		defer close(done)
		defer cancel()
		var s *session
		var tok string
		var err error
		if shot {
			s, err = b.openScreenshots(ctx)
		} else {
			s, tok, err = b.open(ctx, remote, token)
		}
		b.mu.Lock()
		defer b.mu.Unlock()
		b.openStop = nil
		switch {
		case b.closing:
			if err == nil && !s.shot {
				b.portal.closeSession(s.handle)
			}
		case err == nil:
			b.gens++
			s.gen = b.gens
			b.sess, b.phase = s, granted
			if tok != "" {
				b.token = tok
			}
			if !s.shot {
				b.portal.onClosed(s.handle, func(map[string]dbus.Variant) { b.sessionClosed(s) })
				wctx, stop := context.WithCancel(context.Background())
				s.stop = stop
				go b.watch(wctx, s)
			}
		case errors.Is(err, errCancelled):
			b.phase, b.why = denied, "the person declined screen sharing in the desktop's dialog; hostlink does not ask again until it restarts"
		case errors.Is(err, context.DeadlineExceeded):
			b.phase, b.reason, b.why = failed, ReasonConsentTimedOut, fmt.Sprintf("nobody answered the desktop's screen-sharing dialog within %v; the next observation asks again", b.cfg.ConsentTimeout)
		default:
			b.phase, b.reason, b.why = failed, ReasonPortalFailed, "the screen-sharing portal failed: "+err.Error()
		}
	}()
}

// sessionClosed records the compositor's end of s. It may come after the
// watch saw the stream go (a resolution change ends both): the closed
// session is then the better account of it.
func (b *Backend) sessionClosed(s *session) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.sess == s && (b.phase == granted || b.phase == closed && b.reason == ReasonStreamLost) {
		b.phase, b.reason = closed, ReasonClosed
		b.why = "the compositor closed the screen-sharing session (a resolution change, a revoked permission or a compositor restart); observe again"
		s.stopWatch()
	}
}

// streamLost ends s, whose stream is gone while its portal session is
// not: acts bound to it are refused as drift, and the next observation
// opens a new session (asking the person as the portal requires), whose
// stream is found by its own serial.
func (b *Backend) streamLost(s *session, why string) {
	b.mu.Lock()
	if b.sess != s || b.phase != granted {
		b.mu.Unlock()
		return
	}
	b.phase, b.reason = closed, ReasonStreamLost
	b.why = why + "; the screen-sharing session cannot capture any more, and the next observation starts a new one (the desktop may ask the person again)"
	b.mu.Unlock()
	s.stopWatch()
}

// granted reports whether s is the session running now.
func (b *Backend) granted(s *session) bool {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.sess == s && b.phase == granted
}

// refusal says why there is no session now. Called with b.mu held.
func (b *Backend) refusal() error {
	switch b.phase {
	case pending, idle:
		return native.Refuse(native.ErrPermission, ReasonPending,
			"the desktop shows a screen-sharing dialog; the person at the screen must choose a monitor and allow it, then observe again")
	case denied:
		return native.Refuse(native.ErrPermission, ReasonDenied, b.why)
	case closed:
		return native.Refuse(native.ErrSessionClosed, b.reason, b.why)
	case failed:
		return native.Refuse(native.ErrUnavailable, b.reason, b.why)
	}
	return nil
}

// current returns the granted session, or the refusal.
func (b *Backend) current() (*session, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.phase != granted {
		return nil, b.refusal()
	}
	return b.sess, nil
}

// Status reports, per capability, what the session can do now.
func (b *Backend) Status(ctx context.Context) native.Status {
	st := native.Status{
		Windows: native.Readiness{Reason: ReasonNoWindowList,
			Detail: "Wayland has no global window inventory or window focus; only the monitor the person shares is visible (XWayland windows are not all windows, so none are listed)"},
		Accessibility: atspi.Status(ctx, b.cfg.Bus),
	}
	st.Capture = b.deps.capture()
	st.Input = b.deps.input()
	if !st.Capture.Ready {
		if st.Input.Ready {
			st.Input = st.Capture
		}
		return st
	}
	b.mu.Lock()
	ph, s, why, reason := b.phase, b.sess, b.why, b.reason
	b.mu.Unlock()
	switch ph {
	case idle:
		st.Capture.Detail = "not shared yet: the first observation shows the desktop's screen-sharing dialog, in which the person at the screen chooses a monitor" + inputNote(st.Input)
		if b.deps.screenshotOnly() {
			st.Capture.Detail = "not shared yet: the desktop portal takes screenshots only (no screen cast, no input); the first observation may ask the person at the screen to allow them"
		}
	case pending:
		p := native.Readiness{Reason: ReasonPending, Detail: "the desktop shows a screen-sharing dialog; the person at the screen decides"}
		st.Capture = p
		if st.Input.Ready {
			st.Input = p
		}
	case denied:
		d := native.Readiness{Reason: ReasonDenied, Detail: why}
		st.Capture, st.Input = d, d
	case closed:
		// The next observation opens a new session; no act can run
		// before it, since every observation of the old one is void.
		st.Capture.Detail = why
		if st.Input.Ready {
			st.Input = native.Readiness{Reason: reason, Detail: why}
		}
	case failed:
		// The dialog timed out or the portal failed: not ready until an
		// observation asks again (which it may).
		f := native.Readiness{Reason: reason, Detail: why}
		st.Capture = f
		if st.Input.Ready {
			st.Input = f
		}
	case granted:
		st.Capture.Detail = "the person shares one monitor through the portal"
		if s.shot {
			st.Capture.Detail = "screenshots of the whole desktop through the portal (no screen cast, no input)"
		}
		if st.Input.Ready && (!s.remote || s.devices&(deviceKeyboard|devicePointer) != deviceKeyboard|devicePointer) {
			st.Input = native.Readiness{Reason: native.ReasonInputNotGranted, Detail: "the person did not allow remote interaction (keyboard and pointer) in the dialog"}
		}
	}
	if b.locked(ctx) {
		l := native.Readiness{Reason: ReasonSessionLocked, Detail: "the screen saver reports the session locked"}
		st.Capture, st.Input = l, l
	}
	return st
}

func inputNote(in native.Readiness) string {
	if in.Ready {
		return " and allows remote interaction"
	}
	return ""
}

// State: the session's generation and monitor; Wayland gives no focus.
func (b *Backend) State(ctx context.Context) (native.State, error) {
	s, err := b.current()
	if err != nil {
		return native.State{}, err
	}
	return native.State{
		Session:  fmt.Sprintf("wayland|%s|%d", b.cfg.Display, s.gen),
		Monitors: []native.Monitor{s.monitor},
		Locked:   b.locked(ctx),
	}, nil
}

// Monitors is the one monitor the person shares.
func (b *Backend) Monitors(ctx context.Context) ([]native.Monitor, error) {
	s, err := b.current()
	if err != nil {
		return nil, err
	}
	return []native.Monitor{s.monitor}, nil
}

// Windows: Wayland has no global window inventory.
func (b *Backend) Windows(ctx context.Context) ([]native.Window, error) {
	return nil, fmt.Errorf("%w: Wayland has no global window list", native.ErrNotSupported)
}

// Focus: Wayland lets no client focus another's window.
func (b *Backend) Focus(ctx context.Context, w native.Window) error {
	return fmt.Errorf("%w: Wayland has no window focus for clients", native.ErrNotSupported)
}

// Cursor: the portal does not report the pointer's position.
func (b *Backend) Cursor(ctx context.Context) (int, int, error) {
	return 0, 0, fmt.Errorf("%w: the portal does not report the pointer", native.ErrNotSupported)
}

// Accessibility reads AT-SPI on the session's bus.
func (b *Backend) Accessibility(ctx context.Context, max int) (string, error) {
	return atspi.Text(ctx, b.cfg.Bus, max)
}

// Capture returns r of the shared monitor, from a fresh frame.
func (b *Backend) Capture(ctx context.Context, r native.Rect, scale float64) (*image.RGBA, error) {
	s, err := b.current()
	if err != nil {
		return nil, err
	}
	grab := b.grab
	if s.shot {
		grab = b.screenshot
	}
	frame, err := grab(ctx, s)
	if err != nil {
		return nil, err
	}
	return crop(frame, s.monitor.Bounds, r, scale)
}

// locked asks GNOME's and the freedesktop screen saver whether the session
// is locked; without either it answers false.
func (b *Backend) locked(ctx context.Context) bool {
	if b.portal == nil {
		return false
	}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	for _, ss := range [][2]string{{"org.gnome.ScreenSaver", "/org/gnome/ScreenSaver"}, {"org.freedesktop.ScreenSaver", "/org/freedesktop/ScreenSaver"}} {
		var active bool
		if b.portal.conn.Object(ss[0], dbus.ObjectPath(ss[1])).CallWithContext(ctx, ss[0]+".GetActive", dbus.FlagNoAutoStart).Store(&active) == nil {
			return active
		}
	}
	return false
}
