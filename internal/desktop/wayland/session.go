//go:build linux

package wayland

import (
	"context"
	"errors"
	"fmt"

	"github.com/godbus/dbus/v5"

	"github.com/hostlink/hostlink/internal/desktop/native"
)

// session is one portal session the person granted: one monitor's stream
// and, for a remote-desktop session, its input devices.
type session struct {
	handle  dbus.ObjectPath
	gen     int    // counts the sessions of this backend
	node    uint32 // the stream's PipeWire node id, as the portal names it in Notify calls
	serial  uint64 // the node's PipeWire object serial, which capture targets
	monitor native.Monitor
	remote  bool   // a remote-desktop session (else capture only)
	shot    bool   // no screen cast: frames are the portal's screenshots (screenshot.go)
	devices uint32 // the input devices granted (deviceKeyboard, devicePointer)
	// warmKeys and warmPointer: the input warm-up of the keyboard and of
	// the pointer is done (input.go).
	warmKeys, warmPointer bool
	// stop ends the watch of the stream (watch.go); nil without one.
	stop context.CancelFunc
}

// stopWatch ends the watch of s's stream, if one runs.
func (s *session) stopWatch() {
	if s.stop != nil {
		s.stop()
	}
}

// stream is one entry of a Start response's "streams".
type stream struct {
	Node  uint32
	Props map[string]dbus.Variant
}

// open runs the portal's session sequence: create, select devices (for a
// remote-desktop session) and the monitor, then Start, which shows the
// consent dialog and returns when the person has answered. ctx bounds the
// whole sequence, the dialog included.
func (b *Backend) open(ctx context.Context, remote bool, token string) (*session, string, error) {
	p := b.portal
	iface := ifCast
	if remote {
		iface = ifRemote
	}
	res, err := p.request(ctx, iface+".CreateSession", map[string]dbus.Variant{
		"session_handle_token": dbus.MakeVariant(p.token()),
	})
	if err != nil {
		return nil, "", fmt.Errorf("CreateSession: %w", err)
	}
	h, _ := res["session_handle"].Value().(string)
	if h == "" {
		return nil, "", errors.New("CreateSession returned no session handle")
	}
	handle := dbus.ObjectPath(h)
	ok := false
	defer func() {
		if !ok {
			p.closeSession(handle)
		}
	}()
	step := func(method string, opts map[string]dbus.Variant, args ...any) (map[string]dbus.Variant, error) {
		rctx, cancel := context.WithTimeout(ctx, callTimeout)
		defer cancel()
		return p.request(rctx, method, opts, append([]any{handle}, args...)...)
	}
	persist := func(opts map[string]dbus.Variant) {
		opts["persist_mode"] = dbus.MakeVariant(uint32(persistUntilRevoked))
		if token != "" {
			opts["restore_token"] = dbus.MakeVariant(token)
		}
	}
	if remote {
		opts := map[string]dbus.Variant{"types": dbus.MakeVariant(uint32(deviceKeyboard | devicePointer))}
		if b.deps.remoteVersion >= 2 {
			persist(opts)
		}
		if _, err := step(ifRemote+".SelectDevices", opts); err != nil {
			return nil, "", fmt.Errorf("SelectDevices: %w", err)
		}
	}
	opts := map[string]dbus.Variant{
		"types":       dbus.MakeVariant(uint32(sourceMonitor)),
		"multiple":    dbus.MakeVariant(false),
		"cursor_mode": dbus.MakeVariant(uint32(b.deps.cursorMode)),
	}
	if !remote && b.deps.castVersion >= 4 {
		persist(opts)
	}
	if _, err := step(ifCast+".SelectSources", opts); err != nil {
		return nil, "", fmt.Errorf("SelectSources: %w", err)
	}
	// Start shows the dialog: no deadline of its own but ctx's.
	res, err = p.request(ctx, iface+".Start", nil, handle, "")
	if err != nil {
		return nil, "", err
	}
	var streams []stream
	if v, ok := res["streams"]; ok {
		if err := v.Store(&streams); err != nil {
			return nil, "", fmt.Errorf("the portal's Start: streams: %w", err)
		}
	}
	if len(streams) != 1 {
		return nil, "", fmt.Errorf("the portal's Start gave %d streams, not the one monitor", len(streams))
	}
	s := &session{handle: handle, node: streams[0].Node, remote: remote}
	s.monitor = native.Monitor{Name: "portal stream", Primary: true}
	if v, ok := streams[0].Props["position"]; ok {
		s.monitor.Bounds.X, s.monitor.Bounds.Y = pair(v)
	}
	if v, ok := streams[0].Props["size"]; ok {
		s.monitor.Bounds.W, s.monitor.Bounds.H = pair(v)
	}
	if s.monitor.Bounds.Empty() {
		return nil, "", errors.New("the portal's Start gave a stream without a size")
	}
	if remote {
		s.devices, _ = res["devices"].Value().(uint32)
	}
	tok, _ := res["restore_token"].Value().(string)
	if s.serial, err = b.serialOf(ctx, s.node); err != nil {
		return nil, "", err
	}
	// The first frame says how many image pixels a logical pixel is (the
	// monitor's scale), and that capture works at all.
	s.monitor.Scale = 0
	frame, err := b.grab(ctx, s)
	if err != nil {
		return nil, "", fmt.Errorf("the first frame: %w", err)
	}
	s.monitor.Scale = float64(frame.Rect.Dx()) / float64(s.monitor.Bounds.W)
	ok = true
	return s, tok, nil
}

// pair reads a portal (ii) position or size.
func pair(v dbus.Variant) (int, int) {
	var xy struct{ A, B int32 }
	if err := v.Store(&xy); err == nil {
		return int(xy.A), int(xy.B)
	}
	if s, ok := v.Value().([]any); ok && len(s) == 2 {
		a, _ := s[0].(int32)
		b, _ := s[1].(int32)
		return int(a), int(b)
	}
	return 0, 0
}
