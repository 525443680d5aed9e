// Package atspi reads the AT-SPI accessibility tree over D-Bus, for the
// X11 and Wayland desktops alike: the session bus's org.a11y.Bus service
// gives the address of the accessibility bus, where every registered
// application's elements are.
package atspi

import (
	"context"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/godbus/dbus/v5"

	"github.com/hostlink/hostlink/internal/desktop/native"
)

// D-Bus calls are bounded: a hung accessibility bus must not hold the
// desktop's queue.
const dbusTimeout = 2 * time.Second

// a11yBus connects to the AT-SPI bus, whose address the session bus's
// org.a11y.Bus service gives out.
func a11yBus(ctx context.Context, session string) (*dbus.Conn, error) {
	if session == "" {
		return nil, fmt.Errorf("no session bus")
	}
	bus, err := dbus.Connect(session, dbus.WithContext(ctx))
	if err != nil {
		return nil, err
	}
	defer bus.Close()
	var addr string
	if err := bus.Object("org.a11y.Bus", "/org/a11y/bus").
		CallWithContext(ctx, "org.a11y.Bus.GetAddress", 0).Store(&addr); err != nil {
		return nil, fmt.Errorf("AT-SPI bus not running: %w", err)
	}
	c, err := dbus.Dial(addr, dbus.WithContext(ctx))
	if err != nil {
		return nil, err
	}
	if err := c.Auth(nil); err != nil {
		c.Close()
		return nil, err
	}
	if err := c.Hello(); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// Status says whether the accessibility tree can be read through the
// session bus at address session ("" when the session has none).
func Status(ctx context.Context, session string) native.Readiness {
	ctx, cancel := context.WithTimeout(ctx, dbusTimeout)
	defer cancel()
	if session == "" {
		return native.Readiness{Reason: "no_session_bus", Detail: "DBUS_SESSION_BUS_ADDRESS is not set, so AT-SPI cannot be reached"}
	}
	c, err := a11yBus(ctx, session)
	if err != nil {
		return native.Readiness{Reason: "atspi_unavailable", Detail: "the AT-SPI accessibility bus is not running"}
	}
	defer c.Close()
	if _, err := children(ctx, c, node{registry, rootPath}); err != nil {
		return native.Readiness{Reason: "atspi_unavailable", Detail: "the AT-SPI registry does not answer"}
	}
	return native.Readiness{Ready: true}
}

const (
	registry = "org.a11y.atspi.Registry"
	rootPath = dbus.ObjectPath("/org/a11y/atspi/accessible/root")
	iface    = "org.a11y.atspi.Accessible"
	// maxNodes bounds one walk of the accessibility tree.
	maxNodes = 2000
)

// node is an accessible object: a bus name and an object path.
type node struct {
	Bus  string
	Path dbus.ObjectPath
}

func children(ctx context.Context, c *dbus.Conn, n node) ([]node, error) {
	var out []node
	err := c.Object(n.Bus, n.Path).CallWithContext(ctx, iface+".GetChildren", 0).Store(&out)
	return out, err
}

func describe(ctx context.Context, c *dbus.Conn, n node) (role, name string) {
	o := c.Object(n.Bus, n.Path)
	o.CallWithContext(ctx, iface+".GetRoleName", 0).Store(&role)
	if v, err := o.GetProperty(iface + ".Name"); err == nil {
		name, _ = v.Value().(string)
	}
	return role, name
}

// Text walks the AT-SPI tree of every application on the session bus at
// address session, depth first, one line per element ("role: name",
// indented by depth), until max bytes or maxNodes elements.
func Text(ctx context.Context, session string, max int) (string, error) {
	ctx, cancel := context.WithTimeout(ctx, 4*dbusTimeout)
	defer cancel()
	c, err := a11yBus(ctx, session)
	if err != nil {
		return "", fmt.Errorf("%w: %v", native.ErrNotSupported, err)
	}
	defer c.Close()
	var sb strings.Builder
	seen := 0
	var walk func(n node, depth int) bool
	walk = func(n node, depth int) bool {
		if seen >= maxNodes || ctx.Err() != nil {
			return false
		}
		seen++
		role, name := describe(ctx, c, n)
		line := strings.Repeat("  ", depth) + role
		if name != "" {
			line += ": " + name
		}
		if sb.Len()+len(line)+1 > max {
			// Fill up to max, so the caller sees the text was cut.
			sb.WriteString(cut(line+"\n", max-sb.Len()))
			return false
		}
		sb.WriteString(line + "\n")
		kids, _ := children(ctx, c, n)
		for _, k := range kids {
			if !walk(k, depth+1) {
				return false
			}
		}
		return true
	}
	apps, err := children(ctx, c, node{registry, rootPath})
	if err != nil {
		return "", fmt.Errorf("%w: %v", native.ErrNotSupported, err)
	}
	for _, a := range apps {
		if !walk(a, 0) {
			break
		}
	}
	return sb.String(), nil
}

// cut returns the longest prefix of s of at most n bytes that ends on a
// UTF-8 character boundary.
func cut(s string, n int) string {
	if n >= len(s) {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:max(n, 0)]
}
