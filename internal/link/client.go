package link

import (
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"github.com/hostlink/hostlink/internal/textsafe"
	"log/slog"
	"math/big"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/coder/websocket"

	"github.com/hostlink/hostlink/internal/apitype"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/hostinfo"
	"github.com/hostlink/hostlink/internal/link/wire"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/sandboxapi"
)

// helloTimeout bounds the dial and the wait for HELLO_ACK.
const helloTimeout = 15 * time.Second

// Keepalive is the connection's timing. The protocol's platform pings
// every 30 s and expects a PONG within 10 s; hostlink sends STATUS every
// 30 s, and when the platform has been silent for IdleProbe it sends its
// own PING and drops the connection (to reconnect) if nothing arrives
// within PongTimeout.
type Keepalive struct {
	StatusInterval, IdleProbe, PongTimeout time.Duration
}

// DefaultKeepalive is the protocol's timing.
var DefaultKeepalive = Keepalive{StatusInterval: 30 * time.Second, IdleProbe: 75 * time.Second, PongTimeout: 10 * time.Second}

// Limits are the three negotiated ceilings.
type Limits struct {
	MaxFileSizeBytes      int64
	CommandTimeoutSeconds float64
	MaxConcurrent         int
}

// Bounds are the limits as the registry applies them to every call of
// the connection: max_file_size_bytes bounds content, and
// command_timeout_seconds the run of a command.
func (l Limits) Bounds() ops.Bounds {
	return ops.Bounds{MaxContentBytes: l.MaxFileSizeBytes, MaxTimeout: time.Duration(l.CommandTimeoutSeconds * float64(time.Second))}
}

// The limits HELLO_ACK's fields default to when the platform leaves them
// out, as upstream's model reads them.
const (
	DefaultMaxConcurrent         = 4
	DefaultMaxFileSizeBytes      = 10 << 20
	DefaultCommandTimeoutSeconds = 30
)

// Backoff is the reconnect schedule: min(2^attempt × Base, Max) plus a
// random jitter below min(Jitter, that delay).
type Backoff struct {
	Base, Max, Jitter time.Duration
}

// DefaultBackoff is the protocol's schedule.
var DefaultBackoff = Backoff{Base: time.Second, Max: 60 * time.Second, Jitter: 5 * time.Second}

// Delay returns the wait before reconnect attempt n (0-based).
func (b Backoff) Delay(n int) time.Duration {
	d := b.Max
	if n < 30 && b.Base<<n < b.Max && b.Base<<n > 0 {
		d = b.Base << n
	}
	j := min(b.Jitter, d)
	if j > 0 {
		r, _ := rand.Int(rand.Reader, big.NewInt(int64(j)))
		d += time.Duration(r.Int64())
	}
	return d
}

// Client keeps one outbound connection (control or a session's data
// connection) up: it dials, says HELLO, checks HELLO_ACK and serves
// requests, reconnecting with backoff until a terminal close.
type Client struct {
	URL       string
	Token     string
	Tokens    TokenSource // if set, supplies (and renews) the token instead of Token
	SessionID string      // "" on the control connection
	Info      hostinfo.Info
	Local     Limits
	Backoff   Backoff
	Keepalive Keepalive // zero: DefaultKeepalive
	// Registry runs this connection's requests and records its refusals:
	// the session's own on a data connection, the configured workdirs'
	// on the control connection (whose only operation is the folder
	// browser).
	Registry *ops.Registry
	// Capabilities returns what this connection advertises now.
	Capabilities func() []ops.Capability
	// ShellSandbox reports the commands' confinement, sent as
	// SHELL_SANDBOX when the platform grants shell_sandbox; nil: none is
	// described.
	ShellSandbox func() sandboxapi.Status
	// Screen returns the screen size when computer use is advertised.
	Screen func() *[2]int
	// Features returns HELLO's computer_use_features and their coarse
	// buckets when computer use is advertised.
	Features    func() (fine, coarse []string)
	AllowedRoot *string
	// OnConnect runs after each accepted handshake (the control channel
	// invalidates its browse references there).
	OnConnect func()
	// Event records a link event in the audit log.
	Event func(op string, details map[string]any)
	// AuditBytes reports the audit log's size for STATUS.
	AuditBytes func() int64
	Idem       *IdemStore
	Log        *slog.Logger

	routes  map[string]route
	started time.Time       // set by the constructor, read by status and the idle reaper
	runCtx  context.Context // requests run under it, past a dropped connection

	mu       sync.Mutex
	granted  map[ops.Capability]bool
	limits   Limits
	connID   string
	version  wire.ProtoVersion
	state    string
	lastErr  string
	connects int
	inflight int
	lastRecv atomic.Int64
	activity atomic.Int64 // unix nanos a request last started or finished
}

// ErrTerminal wraps the reason the client stopped for good.
type ErrTerminal struct{ Reason string }

func (e *ErrTerminal) Error() string { return "link stopped: " + e.Reason }

// ValidateURL checks a platform URL: wss://, or ws:// to a loopback host.
func ValidateURL(raw string) (*url.URL, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("platform URL: %w", err)
	}
	switch u.Scheme {
	case "wss":
	case "ws":
		if !isLoopback(u.Hostname()) {
			return nil, fmt.Errorf("platform URL: plain ws:// is allowed only to a loopback host; use wss://")
		}
	default:
		return nil, fmt.Errorf("platform URL: scheme must be wss (or ws to loopback)")
	}
	if u.User != nil || u.Fragment != "" || u.RawQuery != "" {
		return nil, fmt.Errorf("platform URL: no user info, query or fragment")
	}
	return u, nil
}

func isLoopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// Run keeps the connection up until ctx is done or a terminal condition
// (close codes 4426-4429, a major-version mismatch, an invalid HELLO_ACK,
// SESSION_REVOKED). It returns nil when ctx ends, else the *ErrTerminal.
func (c *Client) Run(ctx context.Context) error {
	c.runCtx = ctx
	if c.Log == nil {
		c.Log = slog.Default()
	}
	if c.Backoff == (Backoff{}) {
		c.Backoff = DefaultBackoff
	}
	if c.Keepalive == (Keepalive{}) {
		c.Keepalive = DefaultKeepalive
	}
	attempt := 0
	for {
		accepted, err := c.once(ctx)
		if ctx.Err() != nil {
			c.setState("stopped", "")
			return nil
		}
		var term *ErrTerminal
		if errors.As(err, &term) {
			c.setState("stopped", term.Reason)
			c.Log.Error("platform link stopped; restart hostlink to reconnect", "session", c.SessionID, "reason", term.Reason)
			c.event("link_stopped", map[string]any{"reason": term.Reason})
			return term
		}
		if accepted {
			attempt = 0
		}
		d := c.Backoff.Delay(attempt)
		attempt++
		msg := ""
		if err != nil {
			msg = err.Error()
		}
		c.setState("backoff", msg)
		c.Log.Warn("platform link down; reconnecting", "session", c.SessionID, "in", d.Round(time.Millisecond), "err", msg)
		select {
		case <-ctx.Done():
			c.setState("stopped", "")
			return nil
		case <-time.After(d):
		}
	}
}

// setState records the connection's state; hostlink's log gets every
// change, so that it tells the link's story.
func (c *Client) setState(s, errMsg string) {
	c.mu.Lock()
	prev := c.state
	c.state = s
	if errMsg != "" {
		c.lastErr = errMsg
	}
	c.mu.Unlock()
	if s != prev && c.Log != nil {
		c.Log.Info("platform link state", "session", c.SessionID, "url", c.URL, "state", s, "was", prev, "err", errMsg)
	}
}

func (c *Client) event(op string, details map[string]any) {
	if c.Event == nil {
		return
	}
	if details == nil {
		details = map[string]any{}
	}
	if c.SessionID != "" {
		details["session_id"] = c.SessionID
	}
	c.Event(op, details)
}

// once runs one connection. accepted reports whether the handshake
// succeeded.
func (c *Client) once(ctx context.Context) (accepted bool, err error) {
	c.setState("connecting", "")
	dctx, cancel := context.WithTimeout(ctx, helloTimeout)
	defer cancel()
	ws, resp, err := c.dial(dctx)
	if err != nil {
		if resp != nil && (resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden) {
			return false, errcode.New(errcode.AuthFailed, "the platform refused the token (HTTP %d)", resp.StatusCode)
		}
		return false, err
	}
	conn := wire.NewConn(ws)
	defer conn.CloseNow()
	// The connection's own context outlives ctx by a closing handshake:
	// when hostlink stops it says so (1001) instead of vanishing.
	cctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	defer stop()
	go func() {
		select {
		case <-ctx.Done():
			conn.Close(websocket.StatusGoingAway, "hostlink is stopping")
			stop()
		case <-cctx.Done():
		}
	}()
	ack, err := c.handshake(dctx, cctx, conn)
	if err != nil {
		return false, err
	}
	c.mu.Lock()
	c.connects++
	c.mu.Unlock()
	c.setState("connected", "")
	c.event("link_connected", map[string]any{"url": c.URL, "protocol_version": c.version.String(), "granted": ack.GrantedCapabilities})
	if c.OnConnect != nil {
		c.OnConnect()
	}
	if c.Granted(CapShellSandbox) && c.ShellSandbox != nil {
		// Only a platform that granted it knows this message.
		c.send(cctx, conn, wire.NewID(), wire.TypeShellSandbox, c.ShellSandbox(), false)
	}
	err = c.serve(cctx, conn)
	code := websocket.CloseStatus(err)
	c.event("link_closed", map[string]any{"close_code": int(code)})
	if wire.Terminal(code) {
		return true, &ErrTerminal{Reason: fmt.Sprintf("platform closed the connection with %d", int(code))}
	}
	return true, err
}

// hello is the HELLO this connection sends while it advertises caps.
// Every field is one of upstream's HelloPayload: upstream's platform
// parses HELLO with extra fields forbidden, so what hostlink adds goes in
// capabilities, or in frames sent once the platform granted it
// (PROTOCOL.md, Additions).
func (c *Client) hello(caps []ops.Capability) wire.Hello {
	names := make([]string, len(caps))
	for i, cp := range caps {
		names[i] = string(cp)
	}
	hello := wire.Hello{
		ShimVersion:     c.Info.Version,
		ProtocolVersion: wire.Version.String(),
		MachineID:       c.Info.MachineID,
		DisplayName:     cutUTF8(c.Info.Hostname, 128),
		Platform:        c.Info.Platform,
		Arch:            c.Info.Arch,
		Capabilities:    names,
		AllowedRoot:     c.AllowedRoot,
		LocalLLMModels:  []string{},
		HardwareDevices: []any{},
	}
	if slices.Contains(caps, ops.ComputerUse) && c.Screen != nil {
		hello.ScreenResolution = c.Screen()
	}
	if slices.Contains(caps, ops.ComputerUse) && c.Features != nil {
		hello.ComputerUseFeatures, hello.ComputerUseFeaturesCoarse = c.Features()
	}
	return hello
}

// handshake sends HELLO and validates HELLO_ACK.
func (c *Client) handshake(dctx, cctx context.Context, conn *wire.Conn) (*wire.HelloAck, error) {
	caps := c.Capabilities()
	hello := c.hello(caps)
	id := wire.NewID()
	env, err := wire.NewEnvelope(wire.TypeHello, id, wire.Version, hello)
	if err != nil {
		return nil, err
	}
	if err := conn.Send(dctx, env); err != nil {
		return nil, err
	}
	// Read in a goroutine bound to the connection's context: a read
	// cancelled by the short hello deadline would close the connection.
	type res struct {
		b   []byte
		err error
	}
	for {
		ch := make(chan res, 1)
		go func() {
			b, err := conn.ReadFrame(cctx)
			ch <- res{b, err}
		}()
		var r res
		select {
		case r = <-ch:
		case <-dctx.Done():
			return nil, errors.New("no HELLO_ACK within the deadline")
		}
		if r.err != nil {
			if wire.Terminal(websocket.CloseStatus(r.err)) {
				return nil, &ErrTerminal{Reason: fmt.Sprintf("platform closed the connection with %d during the handshake", int(websocket.CloseStatus(r.err)))}
			}
			return nil, r.err
		}
		e, err := wire.DecodeEnvelope(r.b)
		if err != nil || e.Type != wire.TypeHelloAck {
			continue // the platform speaks only after HELLO_ACK; ignore noise
		}
		ack, err := c.checkAck(id, caps, e)
		if err != nil {
			var mm *wire.ErrMajorMismatch
			if errors.As(err, &mm) {
				conn.Close(wire.CloseVersionMismatch, wire.VersionMismatchReason(mm.Ours.String(), mm.Theirs.String()))
			} else {
				conn.Close(wire.CloseInvalidHandshake, err.Error())
			}
			return nil, &ErrTerminal{Reason: err.Error()}
		}
		return ack, nil
	}
}

// checkAck validates HELLO_ACK and applies it.
func (c *Client) checkAck(helloID string, advertised []ops.Capability, e *wire.Envelope) (*wire.HelloAck, error) {
	if e.ID != helloID {
		return nil, errors.New("HELLO_ACK does not carry HELLO's id")
	}
	ack, err := wire.DecodePayload[wire.HelloAck](e)
	if err != nil {
		return nil, fmt.Errorf("HELLO_ACK: %w", err)
	}
	theirs := wire.DefaultPeerVersion
	if ack.ProtocolVersion != nil {
		if theirs, err = wire.ParseVersion(*ack.ProtocolVersion); err != nil {
			return nil, fmt.Errorf("HELLO_ACK: %w", err)
		}
	}
	v, err := wire.Negotiate(wire.Version, theirs)
	if err != nil {
		return nil, err
	}
	granted := map[ops.Capability]bool{}
	for _, g := range ack.GrantedCapabilities {
		if !slices.Contains(advertised, ops.Capability(g)) {
			return nil, fmt.Errorf("HELLO_ACK grants %q, which hostlink did not advertise", textsafe.Clip(g, 32))
		}
		granted[ops.Capability(g)] = true
	}
	sid := ""
	if ack.SessionID != nil {
		sid = *ack.SessionID
	}
	if sid != c.SessionID {
		return nil, errors.New("HELLO_ACK carries the wrong session_id")
	}
	connID := ""
	if ack.ConnectionID != nil {
		connID = *ack.ConnectionID
	}
	if c.SessionID == "" && (connID == "" || !granted[ops.DirectoryBrowse] || v != (wire.ProtoVersion{Major: 1, Minor: 1})) {
		return nil, errors.New("control HELLO_ACK needs a connection_id, protocol 1.1 and directory_browse")
	}
	// An omitted limit is upstream's default, as its model reads it.
	size, timeout, mc := int64(DefaultMaxFileSizeBytes), float64(DefaultCommandTimeoutSeconds), DefaultMaxConcurrent
	if ack.MaxFileSizeBytes != nil {
		if size = *ack.MaxFileSizeBytes; size <= 0 {
			return nil, errors.New("HELLO_ACK max_file_size_bytes must be positive")
		}
	}
	if ack.CommandTimeoutSeconds != nil {
		if timeout = *ack.CommandTimeoutSeconds; timeout <= 0 {
			return nil, errors.New("HELLO_ACK command_timeout_seconds must be positive")
		}
	}
	if ack.MaxConcurrent != nil {
		if mc = *ack.MaxConcurrent; mc <= 0 {
			return nil, errors.New("HELLO_ACK max_concurrent must be positive")
		}
	}
	lim := c.Local
	lim.MaxFileSizeBytes = min(lim.MaxFileSizeBytes, size)
	lim.CommandTimeoutSeconds = min(lim.CommandTimeoutSeconds, timeout)
	lim.MaxConcurrent = min(lim.MaxConcurrent, mc)
	c.mu.Lock()
	c.granted, c.limits, c.connID, c.version = granted, lim, connID, v
	c.mu.Unlock()
	return &ack, nil
}

// Granted reports whether the platform granted capability name.
func (c *Client) Granted(name ops.Capability) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.granted[name]
}

// grantedList is the granted capabilities, sorted.
func (c *Client) grantedList() []string {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]string, 0, len(c.granted))
	for g := range c.granted {
		out = append(out, string(g))
	}
	slices.Sort(out)
	return out
}

// Limits returns the negotiated limits.
func (c *Client) Limits() Limits {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.limits
}

// LastActivity returns when a request last started or finished (zero if
// none).
func (c *Client) LastActivity() time.Time {
	n := c.activity.Load()
	if n == 0 {
		return time.Time{}
	}
	return time.Unix(0, n)
}

// State returns the client's state.
func (c *Client) State() apitype.LinkConnection {
	c.mu.Lock()
	defer c.mu.Unlock()
	s := apitype.LinkConnection{SessionID: c.SessionID, URL: c.URL, State: c.state, ConnectionID: c.connID,
		Connects: c.connects, InFlight: c.inflight, LastError: c.lastErr}
	if c.connects > 0 {
		s.Version = c.version.String()
	}
	return s
}

// peer is who the audit log records this connection's requests as coming
// from.
func (c *Client) peer() string {
	if c.SessionID == "" {
		return "platform control connection"
	}
	return "platform session " + c.SessionID
}
