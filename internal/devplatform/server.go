package devplatform

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/hostlink/hostlink/internal/textsafe"
	"net"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/hostlink/hostlink/internal/link/wire"
)

// ControlPath is the control endpoint; data endpoints are ControlPath/{id}.
const ControlPath = "/ws/local-executor"

// ControlPeer names the control connection among the peers.
const ControlPeer = "control"

// Config is the platform's side of the handshake.
type Config struct {
	ProtocolVersion       string   `json:"protocol_version"`        // platform max; default "1.1"
	Deny                  []string `json:"deny,omitempty"`          // capabilities not granted
	MaxFileSizeBytes      int64    `json:"max_file_size_bytes"`     // default 10 MiB
	CommandTimeoutSeconds int      `json:"command_timeout_seconds"` // default 30; whole seconds, as upstream's model
	MaxConcurrent         int      `json:"max_concurrent"`          // default 4
	PingIntervalSeconds   float64  `json:"ping_interval_seconds"`   // default 30; negative: never
	OmitConnectionID      bool     `json:"omit_connection_id"`      // send an invalid control HELLO_ACK
	// AckAnyMajor answers HELLO_ACK even to another major version, so the
	// executor's own check is what closes the connection.
	AckAnyMajor bool `json:"ack_any_major"`
	// NoPong leaves the executor's PINGs unanswered.
	NoPong bool `json:"no_pong"`
}

func (c Config) withDefaults() Config {
	if c.ProtocolVersion == "" {
		c.ProtocolVersion = "1.1"
	}
	if c.MaxFileSizeBytes == 0 {
		c.MaxFileSizeBytes = 10 << 20
	}
	if c.CommandTimeoutSeconds == 0 {
		c.CommandTimeoutSeconds = 30
	}
	if c.MaxConcurrent == 0 {
		c.MaxConcurrent = 4
	}
	if c.PingIntervalSeconds == 0 {
		c.PingIntervalSeconds = 30
	}
	return c
}

// Event is a connection event, for tests and the API.
type Event struct {
	Time      time.Time `json:"time"`
	Peer      string    `json:"peer"`
	Kind      string    `json:"kind"` // connected, closed, rejected
	CloseCode int       `json:"close_code,omitempty"`
	Reason    string    `json:"reason,omitempty"`
}

// Server is the reference platform.
type Server struct {
	token string
	oauth oauthState // the OAuth authorization server (oauth.go)

	mu     sync.Mutex
	cfg    Config
	peers  map[string]*Peer
	events []Event
	notify chan struct{} // closed and replaced on every event
	tap    func(TapFrame)
	conns  uint64 // connections accepted so far
}

// New returns a Server that accepts executors presenting token.
func New(token string, cfg Config) *Server {
	return &Server{token: token, cfg: cfg.withDefaults(), peers: map[string]*Peer{}, notify: make(chan struct{})}
}

// NewToken returns a random token.
func NewToken() string {
	var b [32]byte
	rand.Read(b[:])
	return base64.RawURLEncoding.EncodeToString(b[:])
}

// SetConfig replaces the handshake configuration for later connections.
func (s *Server) SetConfig(c Config) {
	s.mu.Lock()
	s.cfg = c.withDefaults()
	s.mu.Unlock()
}

func (s *Server) config() Config {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cfg
}

func (s *Server) addEvent(e Event) {
	e.Time = time.Now()
	s.mu.Lock()
	s.events = append(s.events, e)
	if len(s.events) > 10000 {
		s.events = s.events[1:]
	}
	close(s.notify)
	s.notify = make(chan struct{})
	s.mu.Unlock()
}

// Events returns the connection events so far.
func (s *Server) Events() []Event {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.events)
}

// Peer returns the connected peer of that name (ControlPeer or a session
// id), or nil.
func (s *Server) Peer(name string) *Peer {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.peers[name]
}

// WaitPeer waits for a peer of that name connected after since.
func (s *Server) WaitPeer(ctx context.Context, name string, since time.Time) (*Peer, error) {
	for {
		s.mu.Lock()
		p := s.peers[name]
		ch := s.notify
		s.mu.Unlock()
		if p != nil && !p.Connected.Before(since) && !p.isClosed() {
			return p, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("no %s connection: %w", name, ctx.Err())
		case <-ch:
		}
	}
}

func (s *Server) authorized(r *http.Request) bool {
	h := r.Header.Get("Authorization")
	tok, ok := strings.CutPrefix(h, "Bearer ")
	return ok && subtle.ConstantTimeCompare([]byte(tok), []byte(s.token)) == 1
}

// Handler serves the WebSocket endpoints and the HTTP API.
func (s *Server) Handler() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET "+ControlPath, func(w http.ResponseWriter, r *http.Request) { s.accept(w, r, "") })
	mux.HandleFunc("GET "+ControlPath+"/{session}", func(w http.ResponseWriter, r *http.Request) {
		s.accept(w, r, r.PathValue("session"))
	})
	s.apiRoutes(mux)
	s.oauthRoutes(mux)
	return mux
}

// accept runs one executor connection.
func (s *Server) accept(w http.ResponseWriter, r *http.Request, session string) {
	name := ControlPeer
	if session != "" {
		name = session
	}
	if !s.executorAuthorized(r) {
		s.addEvent(Event{Peer: name, Kind: "rejected", Reason: "bad token"})
		http.Error(w, "AUTH_FAILED", http.StatusUnauthorized)
		return
	}
	ws, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	s.mu.Lock()
	s.conns++
	conn := &tapConn{Conn: wire.NewConn(ws), tap: s.tap, id: s.conns, peer: name}
	s.mu.Unlock()
	defer conn.CloseNow()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	p, err := s.handshake(ctx, conn, name, session)
	if err != nil {
		s.addEvent(Event{Peer: name, Kind: "rejected", Reason: err.Error()})
		return
	}
	s.mu.Lock()
	old := s.peers[name]
	s.peers[name] = p
	s.mu.Unlock()
	if old != nil && !old.isClosed() {
		// The same machine again (a restart, a wake from sleep): the old
		// connection is told, and closes itself.
		old.Post(ctx, wire.TypeSessionRevoked, wire.SessionRevoked{Reason: "another_shim_connected", NewShimMachineID: p.Hello.MachineID})
	}
	s.addEvent(Event{Peer: name, Kind: "connected"})
	err = p.readLoop(ctx)
	code := websocket.CloseStatus(err)
	p.markClosed(int(code))
	s.mu.Lock()
	if s.peers[name] == p {
		delete(s.peers, name)
	}
	s.mu.Unlock()
	s.addEvent(Event{Peer: name, Kind: "closed", CloseCode: int(code)})
}

// handshake reads HELLO and answers HELLO_ACK (or closes with 4426).
func (s *Server) handshake(ctx context.Context, conn *tapConn, name, session string) (*Peer, error) {
	hctx, cancel := context.WithTimeout(ctx, 15*time.Second)
	defer cancel()
	type res struct {
		b   []byte
		err error
	}
	ch := make(chan res, 1)
	go func() {
		b, err := conn.ReadFrame(ctx)
		ch <- res{b, err}
	}()
	var rr res
	select {
	case rr = <-ch:
	case <-hctx.Done():
		return nil, errors.New("no HELLO")
	}
	if rr.err != nil {
		return nil, rr.err
	}
	env, err := wire.DecodeEnvelope(rr.b)
	if err != nil || env.Type != wire.TypeHello {
		conn.Close(websocket.StatusPolicyViolation, "expected HELLO")
		return nil, errors.New("first frame is not HELLO")
	}
	hello, err := wire.DecodePayload[wire.Hello](env)
	if err != nil {
		conn.Close(websocket.StatusPolicyViolation, "bad HELLO")
		return nil, err
	}
	cfg := s.config()
	ours, _ := wire.ParseVersion(cfg.ProtocolVersion)
	theirs, err := wire.DefaultPeerVersion, error(nil)
	if hello.ProtocolVersion != "" {
		theirs, err = wire.ParseVersion(hello.ProtocolVersion)
	}
	if err != nil || (theirs.Major != ours.Major && !cfg.AckAnyMajor) {
		reason, _ := json.Marshal(map[string]string{"error": "PROTOCOL_VERSION_MISMATCH",
			"shim_max": textsafe.Clip(hello.ProtocolVersion, 8), "platform_max": cfg.ProtocolVersion})
		conn.Close(wire.CloseVersionMismatch, string(reason))
		return nil, errors.New("protocol major mismatch")
	}
	if hello.Arch != "x86_64" && hello.Arch != "arm64" {
		e, _ := wire.NewEnvelope(wire.TypeError, env.ID, ours, wire.ErrorPayload{Code: "UNSUPPORTED_ARCH", Message: "unsupported arch", Fatal: true})
		conn.Send(ctx, e)
		conn.Close(websocket.StatusPolicyViolation, "UNSUPPORTED_ARCH")
		return nil, errors.New("unsupported arch")
	}
	// Upstream's session ownership: the first executor keeps the
	// connection; one from another machine is turned away (4427, not to
	// reconnect), one from the same machine takes over (accept).
	if old := s.Peer(name); old != nil && !old.isClosed() && old.Hello.MachineID != hello.MachineID {
		conn.Close(wire.CloseTakenOver, `{"error":"SESSION_TAKEN_OVER","reason":"held_by_another_machine"}`)
		return nil, errors.New("held by an executor of another machine")
	}
	granted := []string{}
	for _, c := range hello.Capabilities {
		if !slices.Contains(cfg.Deny, c) {
			granted = append(granted, c)
		}
	}
	ack := map[string]any{
		"session_id": nil, "connection_id": nil, "protocol_version": cfg.ProtocolVersion,
		"granted_capabilities": granted, "max_file_size_bytes": cfg.MaxFileSizeBytes,
		"command_timeout_seconds": cfg.CommandTimeoutSeconds, "max_concurrent": cfg.MaxConcurrent,
	}
	connID := ""
	if session != "" {
		ack["session_id"] = session
	} else if !cfg.OmitConnectionID {
		connID = NewToken()[:16]
		ack["connection_id"] = connID
	}
	e, err := wire.NewEnvelope(wire.TypeHelloAck, env.ID, ours, ack)
	if err != nil {
		return nil, err
	}
	if err := conn.Send(ctx, e); err != nil {
		return nil, err
	}
	p := &Peer{Name: name, Hello: hello, Granted: granted, ConnectionID: connID, Connected: time.Now(),
		conn: conn, version: ours, waiters: map[string]chan *wire.Envelope{}, closed: make(chan struct{}), noPong: cfg.NoPong}
	if cfg.PingIntervalSeconds > 0 {
		go p.pinger(ctx, time.Duration(cfg.PingIntervalSeconds*float64(time.Second)))
	}
	return p, nil
}

// Listen listens on addr, which must be a loopback address: the reference
// platform is for this machine only.
func Listen(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("dev-platform listens only on a loopback IP address, not %q", host)
	}
	return net.Listen("tcp", addr)
}
