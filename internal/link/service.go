package link

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/hostlink/hostlink/internal/apitype"
	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/browse"
	"github.com/hostlink/hostlink/internal/hostinfo"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/rootgrant"
	"github.com/hostlink/hostlink/internal/sandboxapi"
)

// Options configure the platform link.
type Options struct {
	// URL is the control endpoint (wss://…/ws/local-executor); session
	// data connections go to URL + "/" + session id.
	URL   string
	Token string
	// Tokens, if set, supplies the token instead of Token (OAuth pairing).
	Tokens TokenSource
	Info   hostinfo.Info
	Local  Limits
	// Shell reports that command execution is enabled locally.
	Shell bool
	// CommandsDenied, if set, reports whether the local policy denies
	// platform callers commands now. Then shell and command_output are not
	// advertised: they could not work. (Commands that ask still work.) It
	// is asked at every HELLO, so a policy reload counts from the next
	// connection.
	CommandsDenied func() bool
	// ShellSandbox, if set, reports the confinement commands run in (see
	// sandbox.Effective), advertised with shell.
	ShellSandbox func() sandboxapi.Status
	// Agents reports that agent tasks are enabled locally.
	Agents bool
	// ComputerUse, if set, reports whether a desktop backend is ready and
	// the screen size; until one exists computer_use is not advertised.
	ComputerUse func() (ready bool, screen [2]int)
	// NewRuntime opens a session's runtime, confined to root.
	NewRuntime func(root string) (*Runtime, error)
	// Control is the registry of the control connection: its folder
	// browser (browseapi.OpBrowseDirectories), its refusals and the
	// link's events are recorded through it. Browse is the browser's
	// service, whose references Consume turns into a session's folder.
	Control *ops.Registry
	Browse  *browse.Service
	// Secret is the machine-only secret root grants are signed with.
	Secret []byte
	// Session, if set, skips the control channel and connects straight to
	// this session's data endpoint, confined to LegacyRoot (the protocol's
	// legacy --session-id binding).
	Session    string
	LegacyRoot string
	// IdemPath is the idempotency store's file.
	IdemPath    string
	Backoff     Backoff
	Keepalive   Keepalive     // zero: DefaultKeepalive
	IdleTimeout time.Duration // default DefaultIdleTimeout
	AuditBytes  func() int64
	Log         *slog.Logger
}

// Service is the running platform link.
type Service struct {
	opts Options
	idem *IdemStore

	mu      sync.Mutex
	control *Client
	legacy  *Client
	mgr     *manager
}

// New checks o and opens the idempotency store.
func New(o Options) (*Service, error) {
	u, err := ValidateURL(o.URL)
	if err != nil {
		return nil, err
	}
	o.URL = strings.TrimSuffix(u.String(), "/")
	if o.Token == "" && o.Tokens == nil {
		return nil, errors.New("platform link: no token")
	}
	if o.Session != "" {
		if err := rootgrant.ValidSessionID(o.Session); err != nil {
			return nil, fmt.Errorf("platform session id: %w", err)
		}
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.IdleTimeout <= 0 {
		o.IdleTimeout = DefaultIdleTimeout
	}
	if o.Browse == nil {
		o.Browse = browse.New(browse.Options{})
	}
	s := &Service{opts: o}
	if o.IdemPath != "" {
		if s.idem, err = OpenIdemStore(o.IdemPath); err != nil {
			return nil, err
		}
	}
	return s, nil
}

// event records one of the link's own events (connections, sessions) in
// the audit log, through the control registry.
func (s *Service) event(peer, op string, details map[string]any) {
	if s.opts.Control == nil {
		return
	}
	if err := s.opts.Control.Record(ops.Caller{Transport: audit.Link, Peer: peer}, op, nil, details); err != nil {
		s.opts.Log.Warn("a link event is not in the audit log", "op", op, "err", err)
	}
}

// capabilities is what hostlink can do right now; the control connection
// adds directory_browse.
func (s *Service) capabilities(control bool) []ops.Capability {
	caps := []ops.Capability{}
	if control {
		caps = append(caps, ops.DirectoryBrowse)
	}
	caps = append(caps, ops.Files)
	shell := s.opts.Shell && (s.opts.CommandsDenied == nil || !s.opts.CommandsDenied())
	if shell {
		caps = append(caps, ops.Shell)
		if s.opts.ShellSandbox != nil && s.opts.ShellSandbox().Mode == sandboxapi.Workdir {
			caps = append(caps, CapShellSandbox)
		}
	}
	computer := false
	if s.opts.ComputerUse != nil {
		computer, _ = s.opts.ComputerUse()
	}
	if computer {
		caps = append(caps, ops.ComputerUse)
	}
	if s.idem != nil {
		caps = append(caps, CapIdempotency)
	}
	caps = append(caps, CapOperations, CapHostlinkErrors)
	if shell {
		caps = append(caps, CapCommandOutput)
	}
	if computer {
		caps = append(caps, CapAckDetails)
	}
	if s.opts.Agents {
		caps = append(caps, ops.Agents)
	}
	return caps
}

func (s *Service) newClient(url, session string, root *string) *Client {
	c := &Client{
		URL: url, Token: s.opts.Token, Tokens: s.opts.Tokens, SessionID: session, Info: s.opts.Info, Local: s.opts.Local,
		Backoff: s.opts.Backoff, Keepalive: s.opts.Keepalive, AllowedRoot: root, AuditBytes: s.opts.AuditBytes,
		Idem: s.idem, Log: s.opts.Log, started: time.Now(),
	}
	c.Capabilities = func() []ops.Capability { return s.capabilities(session == "" && root == nil) }
	c.Event = func(op string, details map[string]any) { s.event(c.peer(), op, details) }
	c.ShellSandbox = s.opts.ShellSandbox
	c.Screen = func() *[2]int {
		if s.opts.ComputerUse == nil {
			return nil
		}
		if ok, sz := s.opts.ComputerUse(); ok {
			return &sz
		}
		return nil
	}
	return c
}

// Run keeps the link up until ctx is done. It returns early only when the
// control connection (or the legacy data connection) stops for good.
func (s *Service) Run(ctx context.Context) error {
	defer func() {
		if s.idem != nil {
			s.idem.Close()
		}
	}()
	if s.idem != nil {
		pctx, stopPrune := context.WithCancel(ctx)
		defer stopPrune()
		go func() {
			t := time.NewTicker(time.Hour)
			defer t.Stop()
			for {
				select {
				case <-pctx.Done():
					return
				case <-t.C:
					if err := s.idem.Prune(); err != nil {
						s.opts.Log.Warn("pruning the idempotency store", "err", err)
					}
				}
			}
		}()
	}
	if s.opts.Session != "" {
		return s.runLegacy(ctx)
	}
	signer, err := rootgrant.NewSigner(s.opts.Secret, s.opts.Info.MachineID, rootgrant.Options{})
	if err != nil {
		return err
	}
	m := &manager{svc: s, browse: s.opts.Browse, signer: signer, ctx: ctx, sessions: map[string]*session{}}
	c := s.newClient(s.opts.URL, "", nil)
	c.Registry, c.routes = s.opts.Control, m.routes()
	c.OnConnect = m.browse.Reset
	s.mu.Lock()
	s.control, s.mgr = c, m
	s.mu.Unlock()
	defer m.stopAll()
	reapCtx, stopReap := context.WithCancel(ctx)
	defer stopReap()
	go func() {
		t := time.NewTicker(min(time.Minute, s.opts.IdleTimeout/4))
		defer t.Stop()
		for {
			select {
			case <-reapCtx.Done():
				return
			case <-t.C:
				m.reapIdle(s.opts.IdleTimeout)
			}
		}
	}()
	return c.Run(ctx)
}

func (s *Service) runLegacy(ctx context.Context) error {
	rt, err := s.opts.NewRuntime(s.opts.LegacyRoot)
	if err != nil {
		return err
	}
	defer rt.Close()
	root := rt.Root
	c := s.newClient(s.opts.URL+"/"+s.opts.Session, s.opts.Session, &root)
	dc := &dataChannel{c: c, rt: rt}
	c.Registry, c.routes, c.Features = rt.Registry, dc.routes(), dc.features
	s.mu.Lock()
	s.legacy = c
	s.mu.Unlock()
	return c.Run(ctx)
}

// Status reports the connections and sessions.
func (s *Service) Status() apitype.LinkDetail {
	s.mu.Lock()
	control, legacy, m := s.control, s.legacy, s.mgr
	s.mu.Unlock()
	st := apitype.LinkDetail{URL: s.opts.URL, Sessions: []apitype.LinkSession{}}
	if control != nil {
		cs := control.State()
		st.Control = &cs
	}
	if legacy != nil {
		ls := legacy.State()
		st.Legacy = &ls
	}
	if m != nil {
		st.Sessions = m.states()
	}
	return st
}
