package x11

import (
	"context"
	"fmt"
	"io"
	"os"
	"sync"

	"github.com/jezek/xgb"
	"github.com/jezek/xgb/randr"
	"github.com/jezek/xgb/xinerama"
	"github.com/jezek/xgb/xproto"

	"github.com/hostlink/hostlink/internal/desktop/atspi"
	"github.com/hostlink/hostlink/internal/desktop/native"
)

func init() {
	// xgb logs connection details (such as a missing ~/.Xauthority) to
	// stderr; hostlink reports connection failures itself.
	xgb.Logger.SetOutput(io.Discard)
}

// Backend is one X11 display.
type Backend struct {
	display string
	conn    *xgb.Conn
	setup   *xproto.SetupInfo
	screen  *xproto.ScreenInfo
	root    xproto.Window

	hasXTest    bool
	hasRandR15  bool
	hasXinerama bool

	// input serializes Dispatch: its fake events, and the keycodes it
	// binds for characters the map lacks (bound, least recently used
	// first in used; bindings.go).
	input sync.Mutex
	bound map[xproto.Keycode]xproto.Keysym
	used  []xproto.Keycode

	mu        sync.Mutex
	atoms     map[string]xproto.Atom
	clipboard *clipboard // opened on first use (clipboard.go)
}

// Open connects to display (":0"; "" means $DISPLAY) and initialises the
// extensions it uses. A missing XTest or RandR is not an error here: Status
// reports what it disables.
func Open(display string) (*Backend, error) {
	c, err := xgb.NewConnDisplay(display)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", native.ErrUnavailable, err)
	}
	b := &Backend{display: display, conn: c, atoms: make(map[string]xproto.Atom), bound: make(map[xproto.Keycode]xproto.Keysym)}
	b.setup = xproto.Setup(c)
	b.screen = b.setup.DefaultScreen(c)
	b.root = b.screen.Root
	if extension(c, "XTEST") == nil {
		b.hasXTest = true
	}
	if extension(c, "RANDR") == nil {
		if v, err := randr.QueryVersion(c, 1, 5).Reply(); err == nil && (v.MajorVersion > 1 || v.MinorVersion >= 5) {
			b.hasRandR15 = true
		}
	}
	if extension(c, "XINERAMA") == nil {
		if a, err := xinerama.IsActive(c).Reply(); err == nil && a.State != 0 {
			b.hasXinerama = true
		}
	}
	return b, nil
}

// ID names the desktop by its display.
func (b *Backend) ID() string { return "x11:" + b.display }

// Space is X11's: root-window pixels.
func (b *Backend) Space() string { return "pixels" }

// Close ends the connection.
func (b *Backend) Close() error {
	b.input.Lock()
	b.unbindAll()
	b.input.Unlock()
	b.mu.Lock()
	if b.clipboard != nil {
		b.clipboard.conn.Close()
	}
	b.mu.Unlock()
	b.conn.Close()
	return nil
}

// atom interns name once per connection.
func (b *Backend) atom(name string) xproto.Atom {
	b.mu.Lock()
	defer b.mu.Unlock()
	if a, ok := b.atoms[name]; ok {
		return a
	}
	r, err := xproto.InternAtom(b.conn, false, uint16(len(name)), name).Reply()
	if err != nil {
		return 0
	}
	b.atoms[name] = r.Atom
	return r.Atom
}

// atomName resolves an atom to its name.
func (b *Backend) atomName(a xproto.Atom) string {
	r, err := xproto.GetAtomName(b.conn, a).Reply()
	if err != nil {
		return ""
	}
	return r.Name
}

// Status reports what this display can do.
func (b *Backend) Status(ctx context.Context) native.Status {
	st := native.Status{
		Capture: native.Readiness{Ready: true},
		Input:   native.Readiness{Ready: b.hasXTest},
		Windows: native.Readiness{Ready: true},
	}
	if !b.hasXTest {
		st.Input.Reason, st.Input.Detail = "xtest_missing", "the X server lacks the XTEST extension"
	}
	if b.wmCheck() == 0 {
		st.Windows = native.Readiness{Reason: "no_ewmh_window_manager", Detail: "no EWMH window manager runs on this display; windows cannot be listed or focused"}
	}
	if b.sessionLocked(ctx) {
		locked := native.Readiness{Reason: "session_locked", Detail: "the screen saver reports the session locked"}
		st.Capture, st.Input = locked, locked
	}
	st.Accessibility = atspi.Status(ctx, os.Getenv("DBUS_SESSION_BUS_ADDRESS"))
	return st
}
