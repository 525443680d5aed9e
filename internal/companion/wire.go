package companion

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/hostlink/hostlink/internal/errcode"
)

// Protocol versions. A companion speaking a version below
// MinCompanionVersion is refused with CodeUpgradeRequired.
const (
	ProtocolVersion     = 1
	MinCompanionVersion = 1
)

// Capabilities a companion may advertise.
const (
	// CapDesktop: computer control of the host's desktops.
	CapDesktop = "computer_desktop_v1"
	// CapCommands: running commands on the host, inline output only.
	CapCommands = "system_command_v1"
	// CapOutput: command output through capture/read/close transfers.
	CapOutput = "system_command_output_v1"
)

// Codes of this package.
const (
	// CodeUpgradeRequired: the companion is too old for this runtime; the
	// details name the version needed.
	CodeUpgradeRequired errcode.Code = "computer_companion_upgrade_required"
	// CodeNotPaired: the credential or pairing code was refused.
	CodeNotPaired errcode.Code = "COMPANION_NOT_PAIRED"
	// CodeUnavailable: no companion is connected (or none with the
	// needed capability).
	CodeUnavailable errcode.Code = "COMPANION_UNAVAILABLE"
	// CodeTransferFailed: command output did not arrive intact; the
	// details carry the receipt, and the command is not run again.
	CodeTransferFailed errcode.Code = "COMPANION_TRANSFER_FAILED"
)

// MaxChunk is the most payload bytes in one frame.
const MaxChunk = 64 << 10

// maxHeader bounds a frame's JSON header (window lists, receipts).
const maxHeader = 4 << 20

// maxMessage is the WebSocket read limit: a header and one chunk.
const maxMessage = 4 + maxHeader + MaxChunk

// Frame kinds.
const (
	kindRequest  = "req"
	kindResponse = "res"
	kindHello    = "hello"  // companion → runtime: credential, version, capabilities
	kindPair     = "pair"   // companion → runtime: pairing code
	kindUnpair   = "unpair" // companion → runtime: revoke this credential
	kindWelcome  = "welcome"
	kindCancel   = "cancel" // runtime → companion: the caller of request ID is gone
)

// header is a frame's JSON part.
type header struct {
	Kind   string          `json:"kind"`
	ID     uint64          `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Error  *errcode.Error  `json:"error,omitempty"`
	// Native names a backend sentinel error (see nativeErrors).
	Native string `json:"native,omitempty"`
}

func encodeFrame(h header, payload []byte) ([]byte, error) {
	hb, err := json.Marshal(h)
	if err != nil {
		return nil, err
	}
	if len(hb) > maxHeader || len(payload) > MaxChunk {
		return nil, fmt.Errorf("companion: frame too large (%d header, %d payload bytes)", len(hb), len(payload))
	}
	b := make([]byte, 4, 4+len(hb)+len(payload))
	binary.BigEndian.PutUint32(b, uint32(len(hb)))
	b = append(b, hb...)
	return append(b, payload...), nil
}

func decodeFrame(b []byte) (header, []byte, error) {
	var h header
	if len(b) < 4 {
		return h, nil, errors.New("companion: short frame")
	}
	n := binary.BigEndian.Uint32(b)
	if n > maxHeader || int(n) > len(b)-4 {
		return h, nil, errors.New("companion: bad frame header length")
	}
	if err := json.Unmarshal(b[4:4+n], &h); err != nil {
		return h, nil, fmt.Errorf("companion: bad frame header: %w", err)
	}
	payload := b[4+n:]
	if len(payload) > MaxChunk {
		return h, nil, errors.New("companion: payload over 64 KiB")
	}
	return h, payload, nil
}

// peer is one end of a connection: it writes frames one at a time and
// matches responses to the requests this end made.
type peer struct {
	ws *websocket.Conn

	wmu sync.Mutex

	next    atomic.Uint64
	mu      sync.Mutex
	pending map[uint64]chan reply
	closed  chan struct{}
	once    sync.Once
	err     error // why the connection ended, once closed is closed
}

type reply struct {
	h       header
	payload []byte
}

func newPeer(ws *websocket.Conn) *peer {
	ws.SetReadLimit(maxMessage)
	return &peer{ws: ws, pending: make(map[uint64]chan reply), closed: make(chan struct{})}
}

func (p *peer) send(ctx context.Context, h header, payload []byte) error {
	b, err := encodeFrame(h, payload)
	if err != nil {
		return err
	}
	p.wmu.Lock()
	defer p.wmu.Unlock()
	return p.ws.Write(ctx, websocket.MessageBinary, b)
}

func (p *peer) recv(ctx context.Context) (header, []byte, error) {
	typ, b, err := p.ws.Read(ctx)
	if err != nil {
		return header{}, nil, err
	}
	if typ != websocket.MessageBinary {
		return header{}, nil, errors.New("companion: text message")
	}
	return decodeFrame(b)
}

// shut ends the connection once, recording why.
func (p *peer) shut(err error, code websocket.StatusCode, reason string) {
	p.once.Do(func() {
		p.mu.Lock()
		p.err = err
		p.mu.Unlock()
		close(p.closed)
		p.ws.Close(code, reason)
	})
}

// readResponses delivers responses to call until the connection ends.
func (p *peer) readResponses(ctx context.Context) {
	for {
		h, payload, err := p.recv(ctx)
		if err != nil {
			p.shut(err, websocket.StatusNormalClosure, "")
			return
		}
		if h.Kind != kindResponse {
			p.shut(errors.New("companion: unexpected frame"), websocket.StatusProtocolError, "unexpected frame")
			return
		}
		p.mu.Lock()
		ch := p.pending[h.ID]
		delete(p.pending, h.ID)
		p.mu.Unlock()
		if ch != nil {
			ch <- reply{h, payload}
		}
	}
}

// call sends a request and waits for its response, decoding its params
// into out (if not nil) and returning its payload.
func (p *peer) call(ctx context.Context, method string, params, out any) ([]byte, error) {
	raw, err := json.Marshal(params)
	if err != nil {
		return nil, err
	}
	id := p.next.Add(1)
	ch := make(chan reply, 1)
	p.mu.Lock()
	p.pending[id] = ch
	p.mu.Unlock()
	defer func() {
		p.mu.Lock()
		delete(p.pending, id)
		p.mu.Unlock()
	}()
	if err := p.send(ctx, header{Kind: kindRequest, ID: id, Method: method, Params: raw}, nil); err != nil {
		return nil, lost(err)
	}
	select {
	case r := <-ch:
		if r.h.Error != nil {
			return nil, wireError(r.h)
		}
		if out != nil {
			if err := json.Unmarshal(r.h.Params, out); err != nil {
				return nil, errcode.New(errcode.Internal, "companion sent a malformed %s response", method)
			}
		}
		return r.payload, nil
	case <-p.closed:
		return nil, lost(p.err)
	case <-ctx.Done():
		// Tell the companion, so a command whose caller is gone ends.
		sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		p.send(sctx, header{Kind: kindCancel, ID: id}, nil)
		cancel()
		return nil, ctx.Err()
	}
}

// lost is the error of a call whose connection is gone.
func lost(err error) error {
	e := errcode.New(CodeUnavailable, "the connection to the companion was lost")
	if err == nil {
		return e
	}
	return fmt.Errorf("%w (%w)", e, err)
}
