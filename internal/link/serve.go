package link

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/hostlink/hostlink/internal/textsafe"
	"runtime/debug"
	"time"

	"github.com/coder/websocket"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/link/wire"
	"github.com/hostlink/hostlink/internal/ops"
)

// errRevoked ends a connection after SESSION_REVOKED.
var errRevoked = &ErrTerminal{Reason: "the platform revoked the session"}

// serve reads and dispatches frames until the connection ends.
func (c *Client) serve(ctx context.Context, conn *wire.Conn) error {
	c.lastRecv.Store(time.Now().UnixNano())
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go c.keepalive(ctx, conn)
	for {
		b, err := conn.ReadFrame(ctx)
		var oe *wire.OversizeError
		if errors.As(err, &oe) {
			c.lastRecv.Store(time.Now().UnixNano())
			c.reply(ctx, conn, oe.ID, wire.TypeError, nil, errcode.New(wire.CodeFrameTooLarge,
				"frame exceeds %d bytes; it was discarded", wire.MaxFrameBytes).With("max_frame_bytes", wire.MaxFrameBytes))
			continue
		}
		if err != nil {
			return err
		}
		c.lastRecv.Store(time.Now().UnixNano())
		e, err := wire.DecodeEnvelope(b)
		if err != nil {
			c.reply(ctx, conn, "", wire.TypeError, nil, err)
			continue
		}
		if e.Version != "" {
			if v, err := wire.ParseVersion(e.Version); err == nil && v.Major != wire.Version.Major {
				c.Log.Error("dropping a frame of another protocol major version", "type", e.Type, "version", e.Version)
				continue
			}
		}
		switch e.Type {
		case wire.TypePing:
			c.send(ctx, conn, e.ID, wire.TypePong, struct{}{}, false)
			continue
		case wire.TypePong, wire.TypeHelloAck, wire.TypeAck, wire.TypeStatus:
			continue
		case wire.TypeError:
			p, _ := wire.DecodePayload[wire.ErrorPayload](e)
			c.Log.Warn("platform reported an error", "code", textsafe.Clip(p.Code, 64), "message", textsafe.Clip(p.Message, 200))
			continue
		case wire.TypeSessionRevoked:
			p, _ := wire.DecodePayload[wire.SessionRevoked](e)
			c.event("session_revoked", map[string]any{"reason": textsafe.Clip(p.Reason, 64)})
			conn.Close(wire.CloseRevoked, "session revoked")
			return errRevoked
		}
		c.dispatch(ctx, conn, e)
	}
}

// keepalive sends STATUS every StatusInterval and probes a silent
// platform with PING, dropping the connection if nothing comes back.
func (c *Client) keepalive(ctx context.Context, conn *wire.Conn) {
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
				c.send(ctx, conn, wire.NewID(), wire.TypePing, struct{}{}, false)
			case now.Sub(probed) > k.PongTimeout:
				c.Log.Warn("platform silent; dropping the connection", "session", c.SessionID)
				conn.Close(websocket.StatusGoingAway, "no reply to PING")
				return
			}
		}
	}
}

func (c *Client) sendStatus(ctx context.Context, conn *wire.Conn) {
	c.mu.Lock()
	st := wire.Status{InFlight: c.inflight, MaxConcurrent: c.limits.MaxConcurrent,
		UptimeSeconds: time.Since(c.started).Seconds()}
	c.mu.Unlock()
	if c.AuditBytes != nil {
		st.AuditLogBytes = c.AuditBytes()
	}
	c.send(ctx, conn, wire.NewID(), wire.TypeStatus, st, true)
}

// dispatch checks a request against the routes, the granted capabilities
// and the concurrency cap, then serves it on its own goroutine. Every
// refusal is answered and recorded in the audit log.
func (c *Client) dispatch(ctx context.Context, conn *wire.Conn, e *wire.Envelope) {
	refuse := func(r *request, err error) { c.reply(ctx, conn, e.ID, wire.TypeError, nil, r.refuse(err)) }
	if e.ID == "" {
		refuse(c.newRequest(e, route{}), errcode.New(wire.CodeInvalidMessage, "a request needs an id"))
		return
	}
	r, ok := c.routes[e.Type]
	if !ok {
		code := errcode.FeatureNotSupported
		if _, ok := dataOnly[e.Type]; ok && !(computerTypes[e.Type] && c.SessionID != "" && c.Granted(ops.ComputerUse)) {
			code = errcode.CapabilityNotGranted
		}
		need, ok := dataOnly[e.Type]
		if controlOnly[e.Type] && c.SessionID != "" {
			code, need, ok = errcode.CapabilityNotGranted, ops.DirectoryBrowse, true
		}
		err := errcode.New(code, "%s is not served on this connection", e.Type)
		if ok && code == errcode.CapabilityNotGranted {
			err = err.With("required_capability", string(need))
		}
		refuse(c.newRequest(e, route{}), err)
		return
	}
	req := c.newRequest(e, r)
	if !c.Granted(r.capability) {
		refuse(req, errcode.New(errcode.CapabilityNotGranted, "capability %q was not granted", r.capability).
			With("required_capability", string(r.capability)))
		return
	}
	if !c.admit() {
		limit := c.Limits().MaxConcurrent
		refuse(req, errcode.New(errcode.Overloaded, "max_concurrent (%d) requests are in flight", limit).
			With("max_concurrent", limit))
		return
	}
	c.activity.Store(time.Now().UnixNano())
	go func() {
		typ, payload, err := c.run(c.runCtx, req)
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
// A request that failed before reaching an operation is recorded as a
// refusal; one answered from the idempotency store, as a replay.
func (c *Client) run(ctx context.Context, req *request) (typ string, payload any, err error) {
	defer func() {
		if p := recover(); p != nil {
			c.Log.Error("request handler panicked", "type", req.e.Type, "panic", fmt.Sprint(p), "stack", string(debug.Stack()))
			typ, payload, err = wire.TypeError, nil, errcode.New(errcode.Internal, "internal error")
		}
		if err != nil && !req.called {
			err = req.refuse(err)
		}
	}()
	if req.route.mutating {
		k, err := wire.DecodePayload[wire.Idempotent](req.e)
		if err != nil {
			return wire.TypeError, nil, err
		}
		if k.IdempotencyKey != "" {
			if !c.Granted(CapIdempotency) || c.Idem == nil {
				return wire.TypeError, nil, errcode.New(errcode.CapabilityNotGranted,
					"idempotency_key needs the %q capability", CapIdempotency).With("required_capability", string(CapIdempotency))
			}
			typ, payload, replayed, err := c.Idem.Do(ctx, c.SessionID, k.IdempotencyKey, req.e, func() (string, any, error) {
				return req.route.handle(ctx, req)
			})
			if replayed {
				req.called = true
				if aerr := req.replayed(typ, payload); aerr != nil {
					return wire.TypeError, nil, aerr
				}
			}
			return typ, payload, err
		}
	}
	return req.route.handle(ctx, req)
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
func (c *Client) reply(ctx context.Context, conn *wire.Conn, id, typ string, payload any, err error) {
	if err != nil {
		typ, payload = wire.TypeError, c.errorPayload(errcode.As(err))
	} else if raw, ok := payload.(json.RawMessage); ok && typ == wire.TypeError {
		// A reply from the idempotency store: recorded with hostlink's
		// code, sent in this connection's vocabulary.
		var p wire.ErrorPayload
		if json.Unmarshal(raw, &p) == nil {
			payload = c.errorPayload(&errcode.Error{Code: errcode.Code(p.Code), Message: p.Message, Details: p.Details})
		}
	} else {
		payload = c.withGranted(typ, payload)
	}
	if err := c.send(ctx, conn, id, typ, payload, true); errors.Is(err, wire.ErrFrameTooLarge) {
		c.send(ctx, conn, id, wire.TypeError, wire.ErrorPayload{Code: string(errcode.FileTooLarge),
			Message: "the response would exceed the frame limit"}, true)
	}
}

// replyAdditions are the fields hostlink adds to upstream's replies, by
// reply type, each with the capability a connection must grant to
// receive it (PROTOCOL.md, Additions): upstream's models forbid them.
// Handlers always fill them in; reply leaves out what the connection did
// not grant, on a first reply and on one replayed from the idempotency
// store (recorded, maybe, for a connection that granted more) alike.
var replyAdditions = map[string]map[string]ops.Capability{
	wire.TypeCommandResult: {"capture_id": CapCommandOutput},
	wire.TypeAck:           {"pid": CapAckDetails, "focused": CapAckDetails},
}

// withGranted is payload without the additions this connection did not
// grant.
func (c *Client) withGranted(typ string, payload any) any {
	var drop []string
	for f, cp := range replyAdditions[typ] {
		if !c.Granted(cp) {
			drop = append(drop, f)
		}
	}
	if len(drop) == 0 {
		return payload
	}
	raw, ok := payload.(json.RawMessage)
	if !ok {
		var err error
		if raw, err = json.Marshal(payload); err != nil {
			return payload
		}
	}
	var m map[string]json.RawMessage
	if json.Unmarshal(raw, &m) != nil {
		return payload
	}
	for _, f := range drop {
		delete(m, f)
	}
	b, err := json.Marshal(m)
	if err != nil {
		return payload
	}
	return json.RawMessage(b)
}

// errorPayload is e in the vocabulary this connection negotiated:
// hostlink's codes with hostlink_errors granted, else upstream's only.
// CAPABILITY_NOT_GRANTED carries the granted capabilities, as upstream's.
func (c *Client) errorPayload(e *errcode.Error) wire.ErrorPayload {
	if !c.Granted(CapHostlinkErrors) {
		e = wire.ForUpstream(e)
	}
	if e.Code == errcode.CapabilityNotGranted {
		if _, ok := e.Details["granted_capabilities"]; !ok {
			e = e.With("granted_capabilities", c.grantedList())
		}
	}
	return wire.ErrorPayload{Code: string(e.Code), Message: e.Message, Details: e.Details}
}

// send writes one frame; responses carry pending_capacity.
func (c *Client) send(ctx context.Context, conn *wire.Conn, id, typ string, payload any, withCapacity bool) error {
	c.mu.Lock()
	v := c.version
	pending := c.limits.MaxConcurrent - c.inflight
	c.mu.Unlock()
	env, err := wire.NewEnvelope(typ, id, v, payload)
	if err != nil {
		return err
	}
	if withCapacity {
		env.PendingCapacity = &pending
	}
	err = conn.Send(ctx, env)
	if err != nil && !errors.Is(err, wire.ErrFrameTooLarge) {
		c.Log.Debug("send failed", "type", typ, "err", err)
	}
	return err
}
