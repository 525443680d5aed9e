package devplatform

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/hostlink/hostlink/internal/link/wire"
)

// maxKept bounds the unsolicited frames a peer keeps.
const maxKept = 1000

// Peer is one connected executor connection.
type Peer struct {
	Name         string
	Hello        wire.Hello
	Granted      []string
	ConnectionID string
	Connected    time.Time

	conn    *tapConn
	version wire.ProtoVersion
	noPong  bool

	mu        sync.Mutex
	waiters   map[string]chan *wire.Envelope
	frames    []*wire.Envelope // frames no waiter took (STATUS, PING, …)
	pongs     map[string]bool
	closed    chan struct{}
	closeCode int
}

// ErrClosed is returned when the connection ends before a reply.
var ErrClosed = errors.New("devplatform: connection closed")

func (p *Peer) isClosed() bool {
	select {
	case <-p.closed:
		return true
	default:
		return false
	}
}

func (p *Peer) markClosed(code int) {
	p.mu.Lock()
	p.closeCode = code
	p.mu.Unlock()
	close(p.closed)
}

// Done is closed when the connection ends.
func (p *Peer) Done() <-chan struct{} { return p.closed }

// CloseCode is the close code the connection ended with.
func (p *Peer) CloseCode() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.closeCode
}

func (p *Peer) readLoop(ctx context.Context) error {
	for {
		b, err := p.conn.ReadFrame(ctx)
		if err != nil {
			var oe *wire.OversizeError
			if errors.As(err, &oe) {
				continue
			}
			return err
		}
		e, err := wire.DecodeEnvelope(b)
		if err != nil {
			continue
		}
		if e.Type == wire.TypePing && !p.noPong {
			p.send(ctx, &wire.Envelope{Type: wire.TypePong, ID: e.ID, TS: wire.Now(), Version: p.version.String(), Payload: json.RawMessage("{}")})
		}
		p.mu.Lock()
		if e.Type == wire.TypePong && p.pongs != nil {
			p.pongs[e.ID] = true
		}
		ch := p.waiters[e.ID]
		if ch != nil && e.Type != wire.TypeStatus && e.Type != wire.TypePing {
			delete(p.waiters, e.ID)
		} else {
			ch = nil
			p.frames = append(p.frames, e)
			if len(p.frames) > maxKept {
				p.frames = p.frames[1:]
			}
		}
		p.mu.Unlock()
		if ch != nil {
			ch <- e
		}
	}
}

// pinger sends PING every interval and drops the executor if a PONG does
// not come within ten seconds, as the protocol's platform does.
func (p *Peer) pinger(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		id := wire.NewID()
		p.mu.Lock()
		if p.pongs == nil {
			p.pongs = map[string]bool{}
		}
		p.mu.Unlock()
		p.send(ctx, &wire.Envelope{Type: wire.TypePing, ID: id, TS: wire.Now(), Version: p.version.String(), Payload: json.RawMessage("{}")})
		deadline := time.After(10 * time.Second)
		for ok := false; !ok; {
			select {
			case <-ctx.Done():
				return
			case <-deadline:
				p.conn.Close(websocket.StatusGoingAway, "no PONG")
				return
			case <-time.After(50 * time.Millisecond):
				p.mu.Lock()
				ok = p.pongs[id]
				delete(p.pongs, id)
				p.mu.Unlock()
			}
		}
	}
}

func (p *Peer) send(ctx context.Context, e *wire.Envelope) error {
	return p.conn.Send(ctx, e)
}

// Request sends a message and waits for the reply with the same id. An
// empty id gets a fresh one.
func (p *Peer) Request(ctx context.Context, typ, id string, payload any) (*wire.Envelope, error) {
	if id == "" {
		id = wire.NewID()
	}
	e, err := wire.NewEnvelope(typ, id, p.version, payload)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	return p.RequestRaw(ctx, id, b)
}

// RequestRaw sends b as one frame (whatever it holds, up to any size) and
// waits for a reply with id.
func (p *Peer) RequestRaw(ctx context.Context, id string, b []byte) (*wire.Envelope, error) {
	ch, err := p.sendRaw(ctx, id, b)
	if err != nil {
		return nil, err
	}
	return p.await(ctx, id, ch)
}

// Start sends a request and returns at once; Await collects the reply.
// Requests started one after another reach the executor in that order.
func (p *Peer) Start(ctx context.Context, typ string, payload any) (*Pending, error) {
	id := wire.NewID()
	e, err := wire.NewEnvelope(typ, id, p.version, payload)
	if err != nil {
		return nil, err
	}
	b, err := json.Marshal(e)
	if err != nil {
		return nil, err
	}
	return p.StartRaw(ctx, id, b)
}

// StartRaw sends b as one frame, a request with id, and returns at once.
func (p *Peer) StartRaw(ctx context.Context, id string, b []byte) (*Pending, error) {
	ch, err := p.sendRaw(ctx, id, b)
	if err != nil {
		return nil, err
	}
	return &Pending{p: p, id: id, ch: ch}, nil
}

// Pending is a request sent by Start.
type Pending struct {
	p  *Peer
	id string
	ch chan *wire.Envelope
}

// Await waits for the reply.
func (r *Pending) Await(ctx context.Context) (*wire.Envelope, error) {
	return r.p.await(ctx, r.id, r.ch)
}

func (p *Peer) sendRaw(ctx context.Context, id string, b []byte) (chan *wire.Envelope, error) {
	ch := make(chan *wire.Envelope, 1)
	p.mu.Lock()
	p.waiters[id] = ch
	p.mu.Unlock()
	if err := p.conn.SendRaw(ctx, b, 1<<30); err != nil {
		p.forget(id)
		return nil, err
	}
	return ch, nil
}

func (p *Peer) forget(id string) {
	p.mu.Lock()
	delete(p.waiters, id)
	p.mu.Unlock()
}

func (p *Peer) await(ctx context.Context, id string, ch chan *wire.Envelope) (*wire.Envelope, error) {
	defer p.forget(id)
	select {
	case e := <-ch:
		return e, nil
	case <-p.closed:
		return nil, ErrClosed
	case <-ctx.Done():
		return nil, fmt.Errorf("no reply to %s: %w", id, ctx.Err())
	}
}

// Post sends a message without waiting for a reply.
func (p *Peer) Post(ctx context.Context, typ string, payload any) error {
	e, err := wire.NewEnvelope(typ, wire.NewID(), p.version, payload)
	if err != nil {
		return err
	}
	return p.send(ctx, e)
}

// Drop ends the connection without a closing handshake, as a network
// failure would.
func (p *Peer) Drop() error { return p.conn.CloseNow() }

// Close closes the connection with code.
func (p *Peer) Close(code int, reason string) error {
	return p.conn.Close(websocket.StatusCode(code), reason)
}

// Frames returns the kept unsolicited frames of a type ("" for all).
func (p *Peer) Frames(typ string) []*wire.Envelope {
	p.mu.Lock()
	defer p.mu.Unlock()
	out := []*wire.Envelope{}
	for _, e := range p.frames {
		if typ == "" || e.Type == typ {
			out = append(out, e)
		}
	}
	return slices.Clip(out)
}
