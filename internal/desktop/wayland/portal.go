//go:build linux

package wayland

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/godbus/dbus/v5"
)

// The portal's names (xdg-desktop-portal's D-Bus interfaces).
const (
	portalName  = "org.freedesktop.portal.Desktop"
	portalPath  = dbus.ObjectPath("/org/freedesktop/portal/desktop")
	ifRemote    = "org.freedesktop.portal.RemoteDesktop"
	ifCast      = "org.freedesktop.portal.ScreenCast"
	ifShot      = "org.freedesktop.portal.Screenshot"
	ifRequest   = "org.freedesktop.portal.Request"
	ifSession   = "org.freedesktop.portal.Session"
	requestRoot = "/org/freedesktop/portal/desktop/request/"
)

// Portal bit fields.
const (
	deviceKeyboard      = 1
	devicePointer       = 2
	sourceMonitor       = 1
	cursorHidden        = 1
	cursorEmbedded      = 2
	persistUntilRevoked = 2
)

// callTimeout bounds one D-Bus call and one portal request that shows the
// person nothing.
const callTimeout = 10 * time.Second

// Errors of a portal request's Response.
var (
	errCancelled = errors.New("the person declined in the portal's dialog")
	errFailed    = errors.New("the portal failed the request")
)

// portal is one connection to the session bus, with the portal's signals
// routed to whoever waits for them.
type portal struct {
	conn   *dbus.Conn
	sender string // the unique name as request paths spell it
	tokens atomic.Uint64

	mu      sync.Mutex
	waiters map[dbus.ObjectPath]chan response
	closed  map[dbus.ObjectPath]func(details map[string]dbus.Variant)
	sigs    chan *dbus.Signal
	done    chan struct{}
}

type response struct {
	code    uint32
	results map[string]dbus.Variant
}

// dialPortal connects to the session bus at address.
func dialPortal(ctx context.Context, address string) (*portal, error) {
	if address == "" {
		return nil, errors.New("no session bus")
	}
	conn, err := dbus.Connect(address, dbus.WithContext(context.WithoutCancel(ctx)))
	if err != nil {
		return nil, err
	}
	p := &portal{
		conn:    conn,
		sender:  strings.ReplaceAll(strings.TrimPrefix(conn.Names()[0], ":"), ".", "_"),
		waiters: make(map[dbus.ObjectPath]chan response),
		closed:  make(map[dbus.ObjectPath]func(map[string]dbus.Variant)),
		sigs:    make(chan *dbus.Signal, 16),
		done:    make(chan struct{}),
	}
	for _, m := range [][]dbus.MatchOption{
		{dbus.WithMatchInterface(ifRequest), dbus.WithMatchMember("Response"), dbus.WithMatchPathNamespace(dbus.ObjectPath(requestRoot + p.sender))},
		{dbus.WithMatchInterface(ifSession), dbus.WithMatchMember("Closed")},
	} {
		if err := conn.AddMatchSignalContext(ctx, m...); err != nil {
			conn.Close()
			return nil, err
		}
	}
	conn.Signal(p.sigs)
	go p.route()
	return p, nil
}

// route hands each signal to its waiter until the connection closes.
func (p *portal) route() {
	defer close(p.done)
	for s := range p.sigs {
		switch s.Name {
		case ifRequest + ".Response":
			var r response
			if len(s.Body) == 2 {
				r.code, _ = s.Body[0].(uint32)
				r.results, _ = s.Body[1].(map[string]dbus.Variant)
			}
			p.mu.Lock()
			ch := p.waiters[s.Path]
			delete(p.waiters, s.Path)
			p.mu.Unlock()
			if ch != nil {
				ch <- r
			}
		case ifSession + ".Closed":
			p.mu.Lock()
			f := p.closed[s.Path]
			delete(p.closed, s.Path)
			p.mu.Unlock()
			if f != nil {
				var details map[string]dbus.Variant
				if len(s.Body) == 1 {
					details, _ = s.Body[0].(map[string]dbus.Variant)
				}
				f(details)
			}
		}
	}
}

func (p *portal) close() {
	p.conn.Close()
}

func (p *portal) token() string { return fmt.Sprintf("hostlink%d", p.tokens.Add(1)) }

// call makes a plain method call on the portal object, bounded by
// callTimeout.
func (p *portal) call(ctx context.Context, method string, args ...any) *dbus.Call {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	return p.conn.Object(portalName, portalPath).CallWithContext(ctx, method, 0, args...)
}

// request calls a portal method that answers through a Request object and
// waits for its Response until ctx ends; then it closes the request, which
// dismisses a dialog the portal shows for it. opts is the method's options
// argument, which comes last; handle_token is added to it.
func (p *portal) request(ctx context.Context, method string, opts map[string]dbus.Variant, args ...any) (map[string]dbus.Variant, error) {
	tok := p.token()
	path := dbus.ObjectPath(requestRoot + p.sender + "/" + tok)
	ch := make(chan response, 1)
	p.mu.Lock()
	p.waiters[path] = ch
	p.mu.Unlock()
	forget := func() {
		p.mu.Lock()
		delete(p.waiters, path)
		p.mu.Unlock()
	}
	if opts == nil {
		opts = map[string]dbus.Variant{}
	}
	opts["handle_token"] = dbus.MakeVariant(tok)
	var handle dbus.ObjectPath
	if err := p.call(ctx, method, append(args, opts)...).Store(&handle); err != nil {
		forget()
		return nil, err
	}
	if handle != path {
		// Portals before 0.9 choose their own request path; every
		// portal with RemoteDesktop and ScreenCast since has the
		// predictable one.
		forget()
		p.closeRequest(handle)
		return nil, fmt.Errorf("the portal answered on %s, not %s", handle, path)
	}
	select {
	case r := <-ch:
		switch r.code {
		case 0:
			return r.results, nil
		case 1:
			return nil, errCancelled
		default:
			return nil, errFailed
		}
	case <-ctx.Done():
		forget()
		p.closeRequest(path)
		return nil, ctx.Err()
	case <-p.done:
		return nil, errors.New("the session bus connection closed")
	}
}

func (p *portal) closeRequest(path dbus.ObjectPath) {
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	p.conn.Object(portalName, path).CallWithContext(ctx, ifRequest+".Close", 0)
}

// onClosed registers f for the session's Closed signal.
func (p *portal) onClosed(session dbus.ObjectPath, f func(map[string]dbus.Variant)) {
	p.mu.Lock()
	p.closed[session] = f
	p.mu.Unlock()
}

// closeSession ends a portal session (and stops listening for its end).
func (p *portal) closeSession(session dbus.ObjectPath) {
	p.mu.Lock()
	delete(p.closed, session)
	p.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), callTimeout)
	defer cancel()
	p.conn.Object(portalName, session).CallWithContext(ctx, ifSession+".Close", 0)
}

// version reads an interface's version property; 0 when the portal does
// not have the interface.
func (p *portal) version(ctx context.Context, iface string) uint32 {
	v, ok := p.property(ctx, iface, "version")
	if !ok {
		return 0
	}
	n, _ := v.Value().(uint32)
	return n
}

func (p *portal) property(ctx context.Context, iface, name string) (dbus.Variant, bool) {
	var v dbus.Variant
	if err := p.call(ctx, "org.freedesktop.DBus.Properties.Get", iface, name).Store(&v); err != nil {
		return dbus.Variant{}, false
	}
	return v, true
}

func (p *portal) uint32Property(ctx context.Context, iface, name string) uint32 {
	v, ok := p.property(ctx, iface, name)
	if !ok {
		return 0
	}
	n, _ := v.Value().(uint32)
	return n
}

// hasPortal reports whether the portal service runs or can be started
// by the bus.
func (p *portal) hasPortal(ctx context.Context) bool {
	ctx, cancel := context.WithTimeout(ctx, callTimeout)
	defer cancel()
	for _, m := range []string{"ListNames", "ListActivatableNames"} {
		var names []string
		if p.conn.BusObject().CallWithContext(ctx, "org.freedesktop.DBus."+m, 0).Store(&names) == nil {
			for _, n := range names {
				if n == portalName {
					return true
				}
			}
		}
	}
	return false
}
