package companion

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/hostlink/hostlink/internal/sandbox"
	"net"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/hostlink/hostlink/internal/capture"
	"github.com/hostlink/hostlink/internal/desktop/native"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
)

// handshakeTimeout bounds the hello exchange.
const handshakeTimeout = 10 * time.Second

// HostOptions configure the companion side.
type HostOptions struct {
	Runtime    string     // the runtime's loopback address, host:port
	Credential Credential // from Pair
	// Streams, when set, reach the runtime over a helper's standard input
	// and output instead of dialing Runtime: the WSL interop route, where
	// the runtime started this companion itself, so no credential is sent.
	Streams *Streams
	Name    string // shown on the runtime (the host's name)
	// Open reaches the host's desktops; nil means no desktop capability.
	Open func(ctx context.Context) ([]native.Backend, native.Readiness)
	// Captures stores command output; nil means no command capability.
	Captures *capture.Store
	// MaxTimeout bounds a command's timeout (default 1 hour).
	MaxTimeout time.Duration
	// Sandbox confines each command, with its cwd as the workdir; an
	// empty Mode means sandbox.Workdir.
	Sandbox sandbox.Policy
	// Audit, when set, is the host's audit log: every request the runtime
	// makes is recorded there (see hostaudit.go), with AuditPeer naming
	// the runtime.
	Audit     ops.Auditor
	AuditPeer string
	// FrameIdle is how long an untransferred screen frame is kept
	// (default 30 s).
	FrameIdle time.Duration

	// Tests only: what this companion claims to be, and faults it injects
	// into its output chunks.
	version int
	caps    []string
	fault   *fault
}

// RuntimeURL is the WebSocket URL of a runtime at addr, which must be a
// loopback address: the companion never dials anything else.
func RuntimeURL(addr string) (string, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", errcode.New(errcode.InvalidArgument, "--runtime must be host:port (%v)", err)
	}
	if host != "localhost" {
		ip := net.ParseIP(host)
		if ip == nil || !ip.IsLoopback() {
			return "", errcode.New(errcode.InvalidArgument, "--runtime must be a loopback address (127.0.0.1:PORT or [::1]:PORT)")
		}
	}
	return "ws://" + addr + "/companion", nil
}

// dialer opens the WebSocket to the runtime.
type dialer func(ctx context.Context) (*websocket.Conn, error)

// dialAddr dials the runtime at the loopback address addr.
func dialAddr(addr string) dialer {
	return func(ctx context.Context) (*websocket.Conn, error) {
		url, err := RuntimeURL(addr)
		if err != nil {
			return nil, err
		}
		ws, _, err := websocket.Dial(ctx, url, nil)
		if err != nil {
			return nil, errcode.New(CodeUnavailable, "cannot reach the runtime at %s: %v", addr, err)
		}
		return ws, nil
	}
}

// handshake dials the runtime and sends one first frame, returning the
// peer and the runtime's answer.
func handshake(ctx context.Context, dial dialer, kind string, params any) (*peer, header, error) {
	hctx, cancel := context.WithTimeout(ctx, handshakeTimeout)
	defer cancel()
	ws, err := dial(hctx)
	if err != nil {
		return nil, header{}, err
	}
	p := newPeer(ws)
	raw, _ := json.Marshal(params)
	if err := p.send(hctx, header{Kind: kind, Params: raw}, nil); err != nil {
		ws.CloseNow()
		return nil, header{}, lost(err)
	}
	h, _, err := p.recv(hctx)
	if err != nil {
		ws.CloseNow()
		return nil, header{}, lost(err)
	}
	if h.Error != nil {
		ws.Close(websocket.StatusNormalClosure, "")
		return nil, h, h.Error
	}
	return p, h, nil
}

type pairParams struct {
	Code string `json:"code"`
	Name string `json:"name"`
}

// Pair exchanges a pairing code shown by the runtime for a credential.
func Pair(ctx context.Context, addr, code, name string) (Credential, error) {
	p, h, err := handshake(ctx, dialAddr(addr), kindPair, pairParams{Code: code, Name: name})
	if err != nil {
		return Credential{}, err
	}
	defer p.ws.Close(websocket.StatusNormalClosure, "")
	var c Credential
	if err := json.Unmarshal(h.Params, &c); err != nil || c.ID == "" || c.Secret == "" {
		return Credential{}, errcode.New(errcode.Internal, "the runtime sent a malformed credential")
	}
	return c, nil
}

// Unpair asks the runtime to revoke cred. The caller deletes its copy
// whatever the answer.
func Unpair(ctx context.Context, addr string, cred Credential) error {
	p, _, err := handshake(ctx, dialAddr(addr), kindUnpair, cred)
	if err != nil {
		return err
	}
	p.ws.Close(websocket.StatusNormalClosure, "")
	return nil
}

type helloParams struct {
	Credential
	Name         string   `json:"name"`
	Version      int      `json:"version"`
	Capabilities []string `json:"capabilities"`
	OS           string   `json:"os"`
}

type welcomeParams struct {
	Version int `json:"version"`
}

// host is a connected companion's state.
type host struct {
	o HostOptions
	p *peer

	desktops  map[string]native.Backend
	desktopMu sync.Mutex // one desktop call at a time, as Backend requires

	transfers *transfers
	frames    *frames

	runMu   sync.Mutex
	running map[string]chan struct{} // capture id → closed when its receipt is recorded
}

// Run connects to the runtime and serves it until ctx ends or the
// connection drops. A refused credential is CodeNotPaired, an outdated
// protocol CodeUpgradeRequired.
func Run(ctx context.Context, o HostOptions) error {
	if o.version == 0 {
		o.version = ProtocolVersion
	}
	if o.MaxTimeout <= 0 {
		o.MaxTimeout = time.Hour
	}
	if o.FrameIdle <= 0 {
		o.FrameIdle = 30 * time.Second
	}
	h := &host{o: o, desktops: make(map[string]native.Backend), running: make(map[string]chan struct{})}
	caps := o.caps
	if caps == nil {
		if o.Open != nil {
			caps = append(caps, CapDesktop)
		}
		if o.Captures != nil {
			caps = append(caps, CapCommands, CapOutput)
		}
	}
	if o.Open != nil {
		bs, _ := o.Open(ctx)
		for _, b := range bs {
			h.desktops[b.ID()] = b
		}
		defer func() {
			for _, b := range h.desktops {
				b.Close()
			}
		}()
	}
	dial := dialAddr(o.Runtime)
	if o.Streams != nil {
		s := *o.Streams
		dial = func(ctx context.Context) (*websocket.Conn, error) {
			ws, err := dialStdio(ctx, s)
			if err != nil {
				return nil, errcode.New(CodeUnavailable, "cannot reach the runtime over standard input and output: %v", err)
			}
			return ws, nil
		}
	}
	p, _, err := handshake(ctx, dial, kindHello, helloParams{
		Credential: o.Credential, Name: o.Name, Version: o.version, Capabilities: caps, OS: goos,
	})
	if err != nil {
		return err
	}
	h.p = p
	h.auditEvent("companion_connect", map[string]any{"version": o.version, "capabilities": caps})
	defer func() { h.auditEvent("companion_disconnect", nil) }()
	h.transfers = newTransfers(o.Captures)
	h.transfers.fault = o.fault
	h.frames = newFrames(o.FrameIdle)
	defer h.transfers.closeAll()
	defer h.frames.closeAll()
	stop := context.AfterFunc(ctx, func() { p.shut(ctx.Err(), websocket.StatusGoingAway, "companion stopping") })
	defer stop()
	go h.frames.expireLoop(p.closed)
	// A command in flight lives as long as the connection that asked
	// for it: a drop ends it, and its receipt stays in the capture.
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() { <-p.closed; cancel() }()
	err = h.serve(cctx)
	if ctx.Err() != nil {
		return nil
	}
	var ce websocket.CloseError
	if errors.As(err, &ce) && ce.Code == closeUnpaired {
		return errcode.New(CodeNotPaired, "the runtime unpaired this companion")
	}
	return lost(err)
}

// closeUnpaired is the close code of a connection whose pairing was
// revoked.
const closeUnpaired websocket.StatusCode = 4001

// closeReplaced closes a connection that a newer one from the same
// companion replaced.
const closeReplaced websocket.StatusCode = 4002

// serve answers requests until the connection ends. Each request runs in
// its own goroutine, so a long command does not hold up desktop calls.
func (h *host) serve(ctx context.Context) error {
	var wg sync.WaitGroup
	defer wg.Wait()
	var mu sync.Mutex
	inflight := make(map[uint64]context.CancelFunc)
	for {
		req, _, err := h.p.recv(ctx)
		if err != nil {
			h.p.shut(err, websocket.StatusNormalClosure, "")
			return err
		}
		if req.Kind == kindCancel {
			mu.Lock()
			if cancel := inflight[req.ID]; cancel != nil {
				cancel()
			}
			mu.Unlock()
			continue
		}
		if req.Kind != kindRequest {
			h.p.shut(nil, websocket.StatusProtocolError, "unexpected frame")
			return errors.New("companion: unexpected frame from the runtime")
		}
		rctx, cancel := context.WithCancel(ctx)
		mu.Lock()
		inflight[req.ID] = cancel
		mu.Unlock()
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer func() {
				mu.Lock()
				delete(inflight, req.ID)
				mu.Unlock()
				cancel()
			}()
			res := header{Kind: kindResponse, ID: req.ID}
			start := time.Now()
			var out any
			var payload []byte
			err := h.auditCheck(req.Method)
			if err == nil {
				out, payload, err = h.handle(rctx, req.Method, req.Params)
				if aerr := h.auditRequest(req.Method, req.Params, out, payload, err, start); aerr != nil {
					err = aerr
				}
			}
			if err != nil {
				errorHeader(&res, err)
				payload = nil
			} else if res.Params, err = json.Marshal(out); err != nil {
				errorHeader(&res, err)
			}
			if err := h.p.send(ctx, res, payload); err != nil {
				h.p.shut(err, websocket.StatusInternalError, "write failed")
			}
		}()
	}
}

// handle runs one request, returning its response params and payload.
func (h *host) handle(ctx context.Context, method string, params json.RawMessage) (any, []byte, error) {
	switch method {
	case "command.run":
		return decodeRun(params, func(a runParams) (any, []byte, error) { return h.runCommand(ctx, a) })
	case "capture.open", "capture.read", "capture.close":
		if h.o.Captures == nil {
			return nil, nil, errcode.New(errcode.CapabilityNotGranted, "commands are not enabled on this companion")
		}
		return h.transfers.handle(h.p, method, params)
	case "frame.read", "frame.close":
		return h.frames.handle(method, params)
	}
	if len(method) > 8 && method[:8] == "desktop." {
		return h.desktopCall(ctx, method[8:], params)
	}
	return nil, nil, errcode.New(errcode.UnknownOperation, "unknown companion method %q", method)
}

func decodeRun(params json.RawMessage, f func(runParams) (any, []byte, error)) (any, []byte, error) {
	var a runParams
	if err := json.Unmarshal(params, &a); err != nil {
		return nil, nil, errcode.New(errcode.InvalidArgument, "malformed command.run: %v", err)
	}
	return f(a)
}

func decode[T any](params json.RawMessage) (T, error) {
	var v T
	if err := json.Unmarshal(params, &v); err != nil {
		return v, errcode.New(errcode.InvalidArgument, "malformed request: %v", err)
	}
	return v, nil
}

var errNoDesktop = fmt.Errorf("companion: %w", native.ErrUnavailable)
