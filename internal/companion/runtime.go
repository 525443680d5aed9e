package companion

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"net/http"
	"slices"
	"sort"
	"sync"
	"time"

	"github.com/coder/websocket"

	"github.com/hostlink/hostlink/internal/companionapi"
	"github.com/hostlink/hostlink/internal/connlimit"
	"github.com/hostlink/hostlink/internal/desktop/native"
	"github.com/hostlink/hostlink/internal/errcode"
)

// Desktops is where the runtime attaches the desktops companions reach
// (internal/desktop's Service).
type Desktops interface {
	// Attach adds a desktop whose input and observation share the queue
	// named queue with every other route to the same physical desktop.
	Attach(ctx context.Context, b native.Backend, queue string)
	// Detach removes it.
	Detach(id string)
}

// RuntimeOptions configure the runtime side.
type RuntimeOptions struct {
	Pairings *Pairings
	Desktops Desktops // nil: companion desktops are not offered
	// MaxOutputBytes bounds the text delivered per stream (default 1 MiB);
	// the whole stream is still transferred and verified.
	MaxOutputBytes int64
	// RevokeCheck is how often a live connection's pairing is re-checked
	// (default 2 s), so an unpair from the CLI closes it.
	RevokeCheck time.Duration

	minVersion int              // tests only: default MinCompanionVersion
	limits     connlimit.Limits // tests only: default connLimits
}

// connLimits bound the runtime's open connections, in total and from one
// address (through Docker's published port every companion comes from
// the same one), as on the daemon's HTTP endpoint (package connlimit): at
// a limit, connections that never said a verified hello make room for the
// newcomer, and a connected companion's never does.
var connLimits = connlimit.Limits{Max: 64, PerPeer: 16}

// Runtime accepts companion connections.
type Runtime struct {
	o RuntimeOptions

	mu       sync.Mutex
	sessions map[string]*Session // by companion id
	refused  []companionapi.Refusal
	srv      *http.Server
	addr     string
	helper   *helperState // nil unless StartHelper was called
	closing  bool         // Close has begun: no session is registered any more
	// serving counts the sessions registered and not yet detached: Close
	// waits for them, so that once it returns no companion's desktop or
	// session is left listed.
	serving sync.WaitGroup

	// ctx ends at Close; it bounds the helpers the runtime started.
	ctx     context.Context
	stop    context.CancelFunc
	helpers sync.WaitGroup
}

// Session is one connected, authenticated companion.
type Session struct {
	ID           string
	Name         string
	Version      int
	Capabilities []string
	OS           string
	Connected    time.Time
	// Route is how it reached the runtime: RouteCompanion (dialed in,
	// paired) or RouteWSLInterop (a helper this runtime started).
	Route string

	p        *peer
	desktops []string
	// ready: its desktops are attached. Until then the session is not
	// listed or chosen (Sessions, session), so that whoever sees a
	// companion connected also finds its desktops.
	ready bool
}

// NewRuntime returns a Runtime; Serve starts it.
func NewRuntime(o RuntimeOptions) *Runtime {
	if o.MaxOutputBytes <= 0 {
		o.MaxOutputBytes = 1 << 20
	}
	if o.minVersion == 0 {
		o.minVersion = MinCompanionVersion
	}
	if o.RevokeCheck <= 0 {
		o.RevokeCheck = 2 * time.Second
	}
	ctx, stop := context.WithCancel(context.Background())
	return &Runtime{o: o, sessions: make(map[string]*Session), ctx: ctx, stop: stop}
}

// Listen starts serving on addr, which must be a loopback address unless
// anyInterface is set (inside a container, whose published port Docker
// forwards from the host's loopback to the container's interface).
func (r *Runtime) Listen(addr string, anyInterface bool) (string, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", err
	}
	if ip := net.ParseIP(host); !anyInterface && (ip == nil || !ip.IsLoopback()) {
		return "", errcode.New(errcode.InvalidArgument, "companion listen address %q is not loopback", addr)
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		return "", err
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/companion", func(w http.ResponseWriter, req *http.Request) { r.accept(w, req, RouteCompanion) })
	lim := r.o.limits
	if lim == (connlimit.Limits{}) {
		lim = connLimits
	}
	ll := connlimit.Listen(l, lim, nil)
	r.mu.Lock()
	r.srv = &http.Server{Handler: mux, ReadHeaderTimeout: 10 * time.Second, IdleTimeout: time.Minute,
		ConnState: ll.ConnState, ConnContext: connlimit.WithConn}
	r.addr = l.Addr().String()
	srv := r.srv
	r.mu.Unlock()
	go srv.Serve(ll)
	return l.Addr().String(), nil
}

// Addr is the address it listens on.
func (r *Runtime) Addr() string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.addr
}

// Close stops listening and drops every companion.
func (r *Runtime) Close() error {
	r.mu.Lock()
	r.closing = true
	srv := r.srv
	ss := make([]*Session, 0, len(r.sessions))
	for _, s := range r.sessions {
		ss = append(ss, s)
	}
	r.mu.Unlock()
	r.stop()
	for _, s := range ss {
		s.p.shut(nil, websocket.StatusGoingAway, "runtime stopping")
	}
	r.serving.Wait()
	r.helpers.Wait()
	if srv != nil {
		return srv.Close()
	}
	return nil
}

// Routes by which a companion reaches the runtime.
const (
	RouteCompanion  = "companion"   // dialed the runtime's loopback listener with a paired credential
	RouteWSLInterop = "wsl_interop" // a Windows helper the runtime started over WSL interop
)

// accept runs one companion connection: handshake, then requests from
// this side until it ends. A helper's connection (route
// RouteWSLInterop) is the runtime's own child's standard streams: it is
// trusted without a credential, and pairing frames are refused on it.
func (r *Runtime) accept(w http.ResponseWriter, req *http.Request, route string) {
	if req.Header.Get("Origin") != "" {
		// A browser page; companions send no Origin.
		http.Error(w, "forbidden", http.StatusForbidden)
		return
	}
	ws, err := websocket.Accept(w, req, nil)
	if err != nil {
		return
	}
	p := newPeer(ws)
	hctx, cancel := context.WithTimeout(req.Context(), handshakeTimeout)
	h, _, err := p.recv(hctx)
	cancel()
	if err != nil {
		ws.CloseNow()
		return
	}
	ctx := context.WithoutCancel(req.Context())
	refuse := func(e *errcode.Error) {
		p.send(ctx, header{Kind: kindWelcome, Error: e}, nil)
		ws.Close(websocket.StatusPolicyViolation, string(e.Code))
	}
	welcome := func(v any) error {
		raw, _ := json.Marshal(v)
		return p.send(ctx, header{Kind: kindWelcome, Params: raw}, nil)
	}
	helper := route == RouteWSLInterop
	switch {
	case helper && h.Kind != kindHello:
		refuse(errcode.New(errcode.InvalidArgument, "a helper's connection carries no pairing"))
	case h.Kind == kindPair:
		var a pairParams
		json.Unmarshal(h.Params, &a)
		c, err := r.o.Pairings.Redeem(a.Code, a.Name)
		if err != nil {
			refuse(errcode.As(err))
			return
		}
		slog.Info("companion paired", "companion", c.ID, "name", a.Name)
		welcome(c)
		ws.Close(websocket.StatusNormalClosure, "")
	case h.Kind == kindUnpair:
		var c Credential
		json.Unmarshal(h.Params, &c)
		if _, err := r.o.Pairings.Verify(c.ID, c.Secret); err != nil {
			refuse(errcode.As(err))
			return
		}
		r.o.Pairings.Revoke(c.ID)
		r.drop(c.ID, closeUnpaired)
		slog.Info("companion unpaired", "companion", c.ID)
		welcome(struct{}{})
		ws.Close(websocket.StatusNormalClosure, "")
	case h.Kind == kindHello:
		var a helloParams
		json.Unmarshal(h.Params, &a)
		// The hello's credential fields are the same in every protocol
		// version, so an outdated companion is authenticated first: only
		// a paired one can put an entry into discovery.
		var name string
		if helper {
			a.ID, name = helperID, "WSL interop helper"
		} else if name, err = r.o.Pairings.Verify(a.ID, a.Secret); err != nil {
			refuse(errcode.As(err))
			return
		}
		r.mu.Lock()
		need := r.o.minVersion
		r.mu.Unlock()
		if a.Version < need {
			e := errcode.New(CodeUpgradeRequired, "this companion speaks protocol %d; the runtime needs %d: update the companion from the runtime's hostlink",
				a.Version, need).With("needed_version", need)
			r.mu.Lock()
			r.refused = append(r.refused[max(0, len(r.refused)-9):], companionapi.Refusal{Name: a.Name, Version: a.Version,
				Code: string(CodeUpgradeRequired), Needed: need, At: time.Now()})
			r.mu.Unlock()
			if r.o.Desktops != nil {
				r.o.Desktops.Attach(ctx, outdated{id: a.ID, err: e}, outdatedQueue)
			}
			refuse(e)
			return
		}
		if a.Name != "" {
			name = a.Name
		}
		if err := welcome(welcomeParams{Version: ProtocolVersion}); err != nil {
			ws.CloseNow()
			return
		}
		// A verified companion's connection is kept while unverified ones
		// make room (package connlimit).
		connlimit.Trust(req.Context())
		s := &Session{ID: a.ID, Name: name, Version: a.Version, Capabilities: a.Capabilities, OS: a.OS,
			Connected: time.Now(), Route: route, p: p}
		r.serve(ctx, s)
	default:
		refuse(errcode.New(errcode.InvalidArgument, "unexpected first frame"))
	}
}

// serve registers s, attaches its desktops and waits for the connection
// to end (or its pairing to be revoked), then detaches everything.
func (r *Runtime) serve(ctx context.Context, s *Session) {
	r.drop(s.ID, closeReplaced) // a reconnect replaces the old connection
	r.mu.Lock()
	if r.closing {
		r.mu.Unlock()
		s.p.shut(nil, websocket.StatusGoingAway, "runtime stopping")
		return
	}
	r.sessions[s.ID] = s
	r.serving.Add(1)
	r.mu.Unlock()
	defer r.serving.Done()
	if r.o.Desktops != nil {
		r.o.Desktops.Detach(outdated{id: s.ID}.ID())
	}
	go s.p.readResponses(ctx)
	if r.o.Desktops != nil && slices.Contains(s.Capabilities, CapDesktop) {
		var ds []deskInfo
		if _, err := s.p.call(ctx, "desktop.list", struct{}{}, &ds); err == nil {
			for _, d := range ds {
				b := &remoteBackend{s: s, inner: d.ID, space: d.Space}
				r.o.Desktops.Attach(ctx, b, d.ID)
				r.mu.Lock()
				s.desktops = append(s.desktops, b.ID())
				r.mu.Unlock()
			}
		}
	}
	r.mu.Lock()
	s.ready = true
	r.mu.Unlock()
	slog.Info("companion connected", "companion", s.ID, "name", s.Name, "version", s.Version, "capabilities", s.Capabilities)
	t := time.NewTicker(r.o.RevokeCheck)
	defer t.Stop()
	for done := false; !done; {
		select {
		case <-s.p.closed:
			done = true
		case <-t.C:
			if s.Route == RouteCompanion && !r.o.Pairings.Paired(s.ID) {
				s.p.shut(errors.New("unpaired"), closeUnpaired, "unpaired")
			}
		}
	}
	r.mu.Lock()
	if r.sessions[s.ID] == s {
		delete(r.sessions, s.ID)
	}
	r.mu.Unlock()
	if r.o.Desktops != nil {
		r.mu.Lock()
		ids := s.desktops
		r.mu.Unlock()
		for _, id := range ids {
			r.o.Desktops.Detach(id)
		}
	}
	slog.Info("companion disconnected", "companion", s.ID)
}

// drop closes companion id's connection, if any.
func (r *Runtime) drop(id string, code websocket.StatusCode) {
	r.mu.Lock()
	s := r.sessions[id]
	r.mu.Unlock()
	if s != nil {
		s.p.shut(errors.New("replaced or unpaired"), code, "")
		<-s.p.closed
	}
}

// session picks the companion for a request: the named one, or the only
// one with capability want.
func (r *Runtime) session(id, want string) (*Session, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	var match []*Session
	for _, s := range r.sessions {
		if s.ready && (id == "" || s.ID == id || s.Name == id) && slices.Contains(s.Capabilities, want) {
			match = append(match, s)
		}
	}
	sort.Slice(match, func(i, j int) bool { return match[i].ID < match[j].ID })
	switch {
	case len(match) == 1:
		return match[0], nil
	case len(match) == 0 && want == CapCommands:
		return nil, errcode.New(CodeUnavailable, "no connected companion offers commands (start it with hostlink companion --commands)")
	case len(match) == 0:
		return nil, errcode.New(CodeUnavailable, "no connected companion offers %s", want)
	}
	return nil, errcode.New(errcode.InvalidArgument, "%d companions are connected; name one (see companion_status)", len(match))
}

// Sessions lists the connected companions.
func (r *Runtime) Sessions() []*Session {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]*Session, 0, len(r.sessions))
	for _, s := range r.sessions {
		if s.ready {
			out = append(out, s)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out
}
