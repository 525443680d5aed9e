package link

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"runtime/debug"
	"time"

	"github.com/coder/websocket"

	"github.com/hostlink/hostlink/internal/errcode"
)

// NewID returns a random UUID v4 for envelope ids.
func NewID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}

// errRevoked ends a connection after SESSION_REVOKED.
var errRevoked = &ErrTerminal{Reason: "the platform revoked the session"}

// serve reads and dispatches frames until the connection ends.
func (c *Client) serve(ctx context.Context, conn *Conn) error {
	c.lastRecv.Store(time.Now().UnixNano())
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go c.keepalive(ctx, conn)
	for {
		b, err := conn.ReadFrame(ctx)
		var oe *OversizeError
		if errors.As(err, &oe) {
			c.lastRecv.Store(time.Now().UnixNano())
			c.reply(ctx, conn, oe.ID, TypeError, nil, errcode.New(CodeFrameTooLarge,
				"frame exceeds %d bytes; it was discarded", MaxFrameBytes).With("max_frame_bytes", MaxFrameBytes))
			continue
		}
		if err != nil {
			return err
		}
		c.lastRecv.Store(time.Now().UnixNano())
		e, err := DecodeEnvelope(b)
		if err != nil {
			c.reply(ctx, conn, "", TypeError, nil, err)
			continue
		}
		if e.Version != "" {
			if v, err := ParseVersion(e.Version); err == nil && v.Major != Version.Major {
				c.Log.Error("dropping a frame of another protocol major version", "type", e.Type, "version", e.Version)
				continue
			}
		}
		switch e.Type {
		case TypePing:
			c.send(ctx, conn, e.ID, TypePong, struct{}{}, false)
			continue
		case TypePong, TypeHelloAck, TypeAck, TypeStatus:
			continue
		case TypeError:
			p, _ := DecodePayload[ErrorPayload](e)
			c.Log.Warn("platform reported an error", "code", trunc(p.Code, 64), "message", trunc(p.Message, 200))
			continue
		case TypeSessionRevoked:
			p, _ := DecodePayload[SessionRevoked](e)
			c.event("session_revoked", map[string]any{"reason": trunc(p.Reason, 64)})
			conn.Close(CloseRevoked, "session revoked")
			return errRevoked
		}
		c.dispatch(ctx, conn, e)
	}
}

// keepalive sends STATUS every StatusInterval and probes a silent
// platform with PING, dropping the connection if nothing comes back.
func (c *Client) keepalive(ctx context.Context, conn *Conn) {
	k := c.Keepalive
	status := time.NewTicker(k.StatusInterval)
	defer status.Stop()
	check := time.NewTicker(k.PongTimeout / 2)
	defer check.Stop()
	var probed time.Time
	for {
		select {
		case <-ctx.Done():
			return
		case <-status.C:
			c.sendStatus(ctx, conn)
		case now := <-check.C:
			last := time.Unix(0, c.lastRecv.Load())
			switch {
			case now.Sub(last) < k.IdleProbe:
				probed = time.Time{}
			case probed.IsZero():
				probed = now
				c.send(ctx, conn, NewID(), TypePing, struct{}{}, false)
			case now.Sub(probed) > k.PongTimeout:
				c.Log.Warn("platform silent; dropping the connection", "session", c.SessionID)
				conn.Close(websocket.StatusGoingAway, "no reply to PING")
				return
			}
		}
	}
}

func (c *Client) sendStatus(ctx context.Context, conn *Conn) {
	c.mu.Lock()
	st := Status{InFlight: c.inflight, MaxConcurrent: c.limits.MaxConcurrent,
		UptimeSeconds: time.Since(c.started).Seconds()}
	c.mu.Unlock()
	if c.AuditBytes != nil {
		st.AuditLogBytes = c.AuditBytes()
	}
	c.send(ctx, conn, NewID(), TypeStatus, st, true)
}

// dispatch checks a request against the granted capabilities and the
// concurrency cap, then serves it on its own goroutine.
func (c *Client) dispatch(ctx context.Context, conn *Conn, e *Envelope) {
	if e.ID == "" {
		c.reply(ctx, conn, "", TypeError, nil, errcode.New(CodeInvalidMessage, "a request needs an id"))
		return
	}
	r, ok := c.routes[e.Type]
	if !ok {
		code := errcode.FeatureNotSupported
		if dataOnly[e.Type] && !(computerTypes[e.Type] && c.SessionID != "" && c.Granted(CapComputerUse)) {
			code = errcode.CapabilityNotGranted
		}
		c.reply(ctx, conn, e.ID, TypeError, nil, errcode.New(code, "%s is not served on this connection", e.Type))
		return
	}
	if !c.Granted(r.capability) {
		c.reply(ctx, conn, e.ID, TypeError, nil, errcode.New(errcode.CapabilityNotGranted,
			"capability %q was not granted", r.capability))
		return
	}
	if !c.admit() {
		c.reply(ctx, conn, e.ID, TypeError, nil, errcode.New(errcode.Overloaded,
			"max_concurrent (%d) requests are in flight", c.Limits().MaxConcurrent))
		return
	}
	c.activity.Store(time.Now().UnixNano())
	go func() {
		typ, payload, err := c.run(c.runCtx, r, e)
		c.activity.Store(time.Now().UnixNano())
		wasFull := c.release()
		c.reply(ctx, conn, e.ID, typ, payload, err)
		if wasFull {
			c.sendStatus(ctx, conn)
		}
	}()
}

// run serves one admitted request, through the idempotency store when it
// carries a key. A panic becomes INTERNAL_ERROR and touches nothing else.
func (c *Client) run(ctx context.Context, r route, e *Envelope) (typ string, payload any, err error) {
	defer func() {
		if p := recover(); p != nil {
			c.Log.Error("request handler panicked", "type", e.Type, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			typ, payload, err = TypeError, nil, errcode.New(errcode.Internal, "internal error")
		}
	}()
	if r.mutating {
		k, err := DecodePayload[Idempotent](e)
		if err != nil {
			return TypeError, nil, err
		}
		if k.IdempotencyKey != "" {
			if !c.Granted(CapIdempotency) || c.Idem == nil {
				return TypeError, nil, errcode.New(errcode.CapabilityNotGranted,
					"idempotency_key needs the %q capability", CapIdempotency)
			}
			return c.Idem.Do(ctx, c.SessionID, k.IdempotencyKey, e, func() (string, any, error) {
				return r.handle(ctx, e)
			})
		}
	}
	return r.handle(ctx, e)
}

func (c *Client) admit() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.inflight >= c.limits.MaxConcurrent {
		return false
	}
	c.inflight++
	return true
}

// release frees a slot and reports whether every slot was taken before.
func (c *Client) release() (wasFull bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	wasFull = c.inflight >= c.limits.MaxConcurrent
	c.inflight--
	return wasFull
}

// reply sends a response, or an ERROR for err.
func (c *Client) reply(ctx context.Context, conn *Conn, id, typ string, payload any, err error) {
	if err != nil {
		e := errcode.As(err)
		typ, payload = TypeError, ErrorPayload{Code: string(e.Code), Message: e.Message, Details: e.Details}
	}
	if err := c.send(ctx, conn, id, typ, payload, true); errors.Is(err, ErrFrameTooLarge) {
		c.send(ctx, conn, id, TypeError, ErrorPayload{Code: string(errcode.FileTooLarge),
			Message: "the response would exceed the frame limit"}, true)
	}
}

// send writes one frame; responses carry pending_capacity.
func (c *Client) send(ctx context.Context, conn *Conn, id, typ string, payload any, withCapacity bool) error {
	c.mu.Lock()
	v := c.version
	pending := c.limits.MaxConcurrent - c.inflight
	c.mu.Unlock()
	env, err := NewEnvelope(typ, id, v, payload)
	if err != nil {
		return err
	}
	if withCapacity {
		env.PendingCapacity = &pending
	}
	err = conn.Send(ctx, env)
	if err != nil && !errors.Is(err, ErrFrameTooLarge) {
		c.Log.Debug("send failed", "type", typ, "err", err)
	}
	return err
}

// computerTypes are the protocol's computer-use requests; those hostlink
// does not map are FEATURE_NOT_SUPPORTED once computer_use is granted.
var computerTypes = map[string]bool{
	"SCREENSHOT_REQUEST": true, "INPUT_ACTION": true, "CURSOR_POSITION_REQUEST": true,
	"DISPLAY_INFO_REQUEST": true, "WINDOW_LIST_REQUEST": true, "WINDOW_FOCUS": true,
	"APP_LIST_REQUEST": true, "APP_LAUNCH": true, "CLIPBOARD_READ": true, "CLIPBOARD_WRITE": true,
	"PERMISSIONS_CHECK_REQUEST": true,
}

// dataOnly are the request types served only on a session's data
// connection; on the control connection they are CAPABILITY_NOT_GRANTED.
var dataOnly = map[string]bool{
	TypeFileRead: true, TypeFileWrite: true, TypeFileStat: true, TypeFileList: true,
	TypeFileDelete: true, TypeFileMove: true, TypeExecuteCommand: true, TypeOperationCall: true,
	"SCREENSHOT_REQUEST": true, "INPUT_ACTION": true, "CURSOR_POSITION_REQUEST": true,
	"DISPLAY_INFO_REQUEST": true, "WINDOW_LIST_REQUEST": true, "WINDOW_FOCUS": true,
	"APP_LIST_REQUEST": true, "APP_LAUNCH": true, "CLIPBOARD_READ": true, "CLIPBOARD_WRITE": true,
	"PERMISSIONS_CHECK_REQUEST": true, "LOCAL_LLM_COMPLETION": true,
}
