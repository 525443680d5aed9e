package link

import (
	"context"
	"errors"
	"slices"
	"sync"
	"time"

	"github.com/hostlink/hostlink/internal/apitype"
	"github.com/hostlink/hostlink/internal/browse"
	"github.com/hostlink/hostlink/internal/browseapi"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/link/wire"
	"github.com/hostlink/hostlink/internal/rootgrant"
)

// Session limits from the protocol.
const (
	MaxActiveSessions  = 8
	DefaultIdleTimeout = 10 * time.Minute
)

// session is one attached platform session: its signed binding and, while
// active, its data connection and runtime.
type session struct {
	binding rootgrant.Attached
	active  *activeSession
}

type activeSession struct {
	client *Client
	rt     *Runtime
	cancel context.CancelFunc
	done   chan struct{}
	closed sync.Once
}

// closeRuntime releases the runtime once, whoever ends the session first.
func (a *activeSession) closeRuntime() { a.closed.Do(a.rt.Close) }

// manager serves the control channel's session messages and owns the
// per-session data connections.
type manager struct {
	svc    *Service
	browse *browse.Service
	signer *rootgrant.Signer
	ctx    context.Context // sessions run under it

	mu       sync.Mutex
	sessions map[string]*session
}

// list browses for a folder: the folder browser's operation, whose
// policy class is platform_folders.
func (m *manager) list(ctx context.Context, r *request) (string, any, error) {
	req, err := browseapi.DecodeListRequest(r.e.Payload)
	if err != nil {
		return "", nil, err
	}
	resp, err := r.call(ctx, req)
	if err != nil {
		return "", nil, err
	}
	return wire.TypeDirectoryListResponse, resp, nil
}

// controlPeer is who the control connection's events are recorded from.
const controlPeer = "platform control connection"

func (m *manager) attach(_ context.Context, r *request) (string, any, error) {
	req, err := rootgrant.DecodeAttach(r.e.Payload)
	if err != nil {
		return "", nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.sessions[req.SessionID]
	if s != nil && s.active != nil {
		return "", nil, errcode.New(rootgrant.SessionAlreadyActive, "session %s is active; detach it before attaching another folder", req.SessionID)
	}
	root, err := m.browse.Consume(req.BrowseID, req.DirectoryRef)
	if err != nil {
		return "", nil, err
	}
	rev := int64(1)
	if s != nil {
		rev = s.binding.Revision + 1
	}
	att, err := m.signer.Attach(req.SessionID, root.Path, rev)
	if err != nil {
		return "", nil, err
	}
	m.sessions[req.SessionID] = &session{binding: att}
	m.svc.event(controlPeer, "session_attach", map[string]any{"session_id": req.SessionID, "root": att.AllowedRoot, "revision": rev})
	return wire.TypeSessionAttached, att, nil
}

func (m *manager) activate(_ context.Context, r *request) (string, any, error) {
	req, err := rootgrant.DecodeActivate(r.e.Payload)
	if err != nil {
		return "", nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.sessions[req.SessionID]
	if s == nil {
		return "", nil, errcode.New(rootgrant.SessionNotAttached, "session %s has no attached folder", req.SessionID)
	}
	if req.Revision != s.binding.Revision {
		return "", nil, errcode.New(rootgrant.RevisionMismatch, "session %s is at revision %d", req.SessionID, s.binding.Revision).
			With("current_revision", s.binding.Revision)
	}
	if s.active == nil {
		// The folder must still be the one that was attached.
		if _, err := m.signer.Verify(s.binding.RootGrant, req.SessionID); err != nil {
			return "", nil, err
		}
		if err := m.start(req.SessionID, s); err != nil {
			return "", nil, err
		}
	}
	b := s.binding
	return wire.TypeSessionActivated, rootgrant.Activated{SessionID: b.SessionID, AllowedRoot: b.AllowedRoot,
		Fingerprint: b.Fingerprint, Revision: b.Revision}, nil
}

func (m *manager) restore(_ context.Context, r *request) (string, any, error) {
	req, err := rootgrant.DecodeRestore(r.e.Payload)
	if err != nil {
		return "", nil, err
	}
	att, err := m.signer.Restore(req)
	if err != nil {
		return "", nil, err
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	s := m.sessions[req.SessionID]
	if s != nil {
		switch {
		case att.Revision < s.binding.Revision:
			return "", nil, errcode.New(rootgrant.RevisionMismatch, "the grant is for revision %d; session %s is at %d",
				att.Revision, req.SessionID, s.binding.Revision).With("current_revision", s.binding.Revision)
		case s.active != nil && att.AllowedRoot != s.binding.AllowedRoot:
			return "", nil, errcode.New(rootgrant.SessionAlreadyActive, "session %s is active on another folder; detach it first", req.SessionID)
		}
	} else {
		s = &session{}
		m.sessions[req.SessionID] = s
	}
	s.binding = att
	if s.active == nil {
		if err := m.start(req.SessionID, s); err != nil {
			return "", nil, err
		}
	}
	m.svc.event(controlPeer, "session_restore", map[string]any{"session_id": req.SessionID, "root": att.AllowedRoot, "revision": att.Revision})
	return wire.TypeSessionRestored, att, nil
}

func (m *manager) detach(_ context.Context, r *request) (string, any, error) {
	req, err := rootgrant.DecodeDetach(r.e.Payload)
	if err != nil {
		return "", nil, err
	}
	m.mu.Lock()
	s := m.sessions[req.SessionID]
	delete(m.sessions, req.SessionID)
	m.mu.Unlock()
	if s != nil {
		m.stop(s.active)
		m.svc.event(controlPeer, "session_detach", map[string]any{"session_id": req.SessionID})
	}
	return wire.TypeAck, wire.AckPayload{OK: true}, nil
}

// start opens the session's runtime and data connection. m.mu is held.
func (m *manager) start(id string, s *session) error {
	n := 0
	for _, o := range m.sessions {
		if o.active != nil {
			n++
		}
	}
	if n >= MaxActiveSessions {
		return errcode.New(errcode.Overloaded, "%d sessions are active; detach one first", MaxActiveSessions).
			With("max_active_sessions", MaxActiveSessions)
	}
	rt, err := m.svc.opts.NewRuntime(s.binding.AllowedRoot)
	if err != nil {
		return err
	}
	root := rt.Root
	c := m.svc.newClient(m.svc.opts.URL+"/"+id, id, &root)
	dc := &dataChannel{c: c, rt: rt}
	c.Registry, c.routes, c.Features = rt.Registry, dc.routes(), dc.features
	ctx, cancel := context.WithCancel(m.ctx)
	a := &activeSession{client: c, rt: rt, cancel: cancel, done: make(chan struct{})}
	s.active = a
	go func() {
		defer close(a.done)
		err := c.Run(ctx)
		var term *ErrTerminal
		if errors.As(err, &term) {
			// The platform ended this session's connection for good;
			// the binding stays for RESTORE_SESSION.
			m.mu.Lock()
			if s.active == a {
				s.active = nil
			}
			m.mu.Unlock()
			a.closeRuntime()
		}
	}()
	return nil
}

// stop ends an active session's connection and runtime, waiting for it.
func (m *manager) stop(a *activeSession) {
	if a == nil {
		return
	}
	a.cancel()
	<-a.done
	a.closeRuntime()
}

// reapIdle stops active sessions with no data request in flight and none
// started or finished for idle, keeping their bindings for RESTORE_SESSION.
func (m *manager) reapIdle(idle time.Duration) {
	m.mu.Lock()
	var stale []*activeSession
	for id, s := range m.sessions {
		a := s.active
		if a == nil {
			continue
		}
		if a.client.State().InFlight > 0 {
			continue // a long request is not idleness
		}
		last := a.client.LastActivity()
		if last.IsZero() || last.Before(a.client.started) {
			last = a.client.started
		}
		if !last.IsZero() && time.Since(last) > idle {
			stale = append(stale, a)
			s.active = nil
			m.svc.event(controlPeer, "session_idle_stop", map[string]any{"session_id": id})
		}
	}
	m.mu.Unlock()
	for _, a := range stale {
		m.stop(a)
	}
}

// stopAll ends every session (on shutdown).
func (m *manager) stopAll() {
	m.mu.Lock()
	var all []*activeSession
	for _, s := range m.sessions {
		if s.active != nil {
			all = append(all, s.active)
			s.active = nil
		}
	}
	m.mu.Unlock()
	for _, a := range all {
		m.stop(a)
	}
}

// states lists the sessions for status.
func (m *manager) states() []apitype.LinkSession {
	m.mu.Lock()
	defer m.mu.Unlock()
	out := []apitype.LinkSession{}
	for id, s := range m.sessions {
		st := apitype.LinkSession{SessionID: id, AllowedRoot: s.binding.AllowedRoot, Revision: s.binding.Revision}
		if s.active != nil {
			cs := s.active.client.State()
			st.Active, st.Connection = true, &cs
		}
		out = append(out, st)
	}
	slices.SortFunc(out, func(a, b apitype.LinkSession) int {
		if a.SessionID < b.SessionID {
			return -1
		}
		return 1
	})
	return out
}
