package ipc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/connlimit"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/procs"
)

// Default time limits; see Server.
const (
	DefaultFrameTimeout = 2 * time.Minute
	DefaultWriteTimeout = 30 * time.Second
	// DefaultMaxConns bounds open connections, so a local process cannot
	// exhaust the daemon's descriptors or goroutines.
	DefaultMaxConns = 64
	// DefaultMaxConnsPerPeer bounds the open connections of one process.
	DefaultMaxConnsPerPeer = 16
	// maxRefusing bounds refused peers being told why at once; past it
	// they are disconnected without an answer.
	maxRefusing = 16
	// refuseTimeout bounds telling a refused peer why.
	refuseTimeout = 5 * time.Second
)

// Server serves the control channel.
type Server struct {
	Registry *ops.Registry
	// SessionStarted and SessionEnded, if set, are told the session key
	// of each connection (see ops.Caller.Session) when it opens and when
	// it closes, to end its grants.
	SessionStarted, SessionEnded func(session string)
	// Refusals records refused peers (counted per uid, so that a flood of
	// them does not grow the audit log). Calls are audited by Registry.
	Refusals *audit.Refusals
	// FrameTimeout bounds the wait for each request frame, from the end of
	// the previous response: an idle or slow peer is disconnected after it.
	FrameTimeout time.Duration
	// WriteTimeout bounds writing one response to a peer that does not read.
	WriteTimeout time.Duration
	// MaxConns bounds open connections (DefaultMaxConns when zero) and
	// MaxConnsPerPeer those of one process (DefaultMaxConnsPerPeer). At a
	// limit, the connection idle the longest is closed to make room (see
	// package connlimit); when every one is busy, the newcomer is told
	// SHIM_OVERLOADED and closed.
	MaxConns        int
	MaxConnsPerPeer int
	// MCP, if set, serves the connections that open an MCP session
	// (MethodMCPSession); without it such a request is refused.
	MCP MCPFunc
	// ConnState, if set, is told of each connection served as it opens
	// and as it closes (for the daemon's idle exit).
	ConnState func(open bool)

	// measure is the per-OS peer measurement; tests replace it.
	measure measureFunc

	once     sync.Once
	tracker  *connlimit.Tracker
	refusing chan struct{}
	wg       sync.WaitGroup
}

// LocalMethod answers one of Server.Local's methods.
type LocalMethod func(ctx context.Context, peer string, params json.RawMessage) (any, error)

// Serve accepts connections on ln until ctx is done or ln is closed, then
// closes ln and every connection and waits for their handlers. Each peer
// is measured as it is accepted: a peer that is not the user is refused
// without taking a connection slot, so other users cannot crowd the user
// out; one of the user's that hostlink started (Peer.Child) acts for an
// agent, and may call only what agents may (ops.Caller.Child). Running out of descriptors is waited out (connlimit.Accept), never
// a reason to stop.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	s.once.Do(func() {
		s.tracker = connlimit.NewTracker(connlimit.Limits{
			Max: or(s.MaxConns, DefaultMaxConns), PerPeer: or(s.MaxConnsPerPeer, DefaultMaxConnsPerPeer)})
		s.tracker.OnShed = func(peer, reason string) {
			s.Refusals.Refuse(peer, audit.Record{Transport: audit.IPC, Peer: peer, Op: "connection_shed",
				Code: string(errcode.Overloaded), Details: map[string]any{"reason": reason}})
		}
		s.refusing = make(chan struct{}, maxRefusing)
	})
	stop := context.AfterFunc(ctx, func() { ln.Close() })
	defer stop()
	defer s.closeAll()
	measure := s.measure
	if measure == nil {
		measure = measurePeer
	}
	// Every process hostlink starts stays in its tree, so that a peer can
	// be told from the user however its parents exit.
	procs.KeepDescendants()
	for {
		c, err := connlimit.Accept(ln)
		if err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return err
		}
		peer, err := measure(c)
		if err == nil {
			err = checkPeer(peer)
		}
		if err != nil {
			s.refuseAsync(c, peer, err)
			continue
		}
		peer.Child = procs.Descendant(peer.PID)
		tc := s.tracker.Admit(c, fmt.Sprintf("pid %d", peer.PID), true)
		if tc == nil {
			c.SetWriteDeadline(time.Now().Add(refuseTimeout))
			c.Write(encodeResponse(Response{Error: errcode.New(errcode.Overloaded, "too many open connections to hostlink, all busy; retry when one is done")}))
			c.Close()
			continue
		}
		s.wg.Add(1)
		if s.ConnState != nil {
			s.ConnState(true)
		}
		go func() {
			defer s.wg.Done()
			if s.ConnState != nil {
				defer s.ConnState(false)
			}
			defer tc.Close()
			s.serveConn(ctx, tc, peer)
		}()
	}
}

func (s *Server) closeAll() {
	s.tracker.CloseAll()
	s.wg.Wait()
}

// refuseAsync tells a refused peer why and closes its connection, off the
// accept loop and at most maxRefusing at a time: past that, or if the
// peer does not read, it is just disconnected.
func (s *Server) refuseAsync(c net.Conn, peer Peer, why error) {
	select {
	case s.refusing <- struct{}{}:
	default:
		s.auditRefusal(peer, why)
		c.Close()
		return
	}
	s.wg.Add(1)
	go func() {
		defer s.wg.Done()
		defer func() { <-s.refusing }()
		defer c.Close()
		s.refuse(c, peer, why)
	}()
}

// serveConn answers the requests of a measured peer one at a time, in
// order, marking the connection busy while it handles one.
func (s *Server) serveConn(ctx context.Context, c *connlimit.Conn, peer Peer) {
	r := bufio.NewReaderSize(c, 64<<10)
	session := ops.NewSessionKey(audit.IPC)
	if s.SessionStarted != nil {
		s.SessionStarted(session)
	}
	if s.SessionEnded != nil {
		defer s.SessionEnded(session)
	}
	for first := true; ; first = false {
		c.SetReadDeadline(time.Now().Add(or(s.FrameTimeout, DefaultFrameTimeout)))
		line, err := readFrame(r)
		if errors.Is(err, errFrameTooLarge) {
			// The rest of the line is unread, so the stream cannot be
			// resynchronised cheaply: answer, then close.
			s.write(c, Response{Error: errcode.New(FrameTooLarge, "request frame is over %d bytes; closing the connection", MaxFrame)})
			return
		}
		// A last line without a newline still counts at EOF; a line cut off
		// by the deadline or a broken connection does not.
		if err == nil && first {
			if req, perr := DecodeFrame(line); perr == nil && req.Method == MethodMCPSession {
				// A session is busy for its whole life: closing it to
				// make room would end an MCP client's session.
				c.SetBusy(true)
				s.serveSession(ctx, c, r, peer, req)
				return
			}
		}
		if err == nil || (errors.Is(err, io.EOF) && len(line) > 0) {
			c.SetBusy(true)
			ok := s.write(c, s.handleWatching(ctx, c, r, peer, session, line))
			c.SetBusy(false)
			if !ok {
				return
			}
		}
		if err != nil {
			return
		}
	}
}

// refuse tells the peer why, audits the refusal and returns; the caller
// closes the connection.
func (s *Server) refuse(c net.Conn, peer Peer, why error) {
	s.auditRefusal(peer, why)
	c.SetWriteDeadline(time.Now().Add(refuseTimeout))
	c.Write(encodeResponse(Response{Error: errcode.New(PeerRefused, "connection refused: only the user running hostlink may use this channel")}))
}

func (s *Server) auditRefusal(peer Peer, why error) {
	who, source := "unmeasured", "unmeasured"
	if peer != (Peer{}) {
		who, source = peer.String(), peer.user()
	}
	s.Refusals.Refuse(source, audit.Record{
		Time: time.Now(), Transport: audit.IPC, Peer: who, Op: "ipc_peer_refused",
		Code: string(PeerRefused), Details: map[string]any{"reason": why.Error()},
	})
}

func (s *Server) write(c net.Conn, r Response) bool {
	c.SetWriteDeadline(time.Now().Add(or(s.WriteTimeout, DefaultWriteTimeout)))
	_, err := c.Write(encodeResponse(r))
	return err == nil
}

// handleWatching is handle, cancelling the call when the peer closes the
// connection meanwhile (a `hostlink call` interrupted while its call is
// held for approval abandons the approval). A peer that sends its next
// request early is not watched further: the request waits in r.
func (s *Server) handleWatching(ctx context.Context, c net.Conn, r *bufio.Reader, peer Peer, session string, line []byte) Response {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	c.SetReadDeadline(time.Time{})
	var answered atomic.Bool
	watched := make(chan struct{})
	go func() {
		defer close(watched)
		if _, err := r.Peek(1); err != nil && !answered.Load() {
			cancel()
		}
	}()
	resp := s.handle(ctx, c, peer, session, line)
	answered.Store(true)
	c.SetReadDeadline(time.Now()) // ends the Peek; serveConn sets the next deadline
	<-watched
	return resp
}

// handle answers one request frame of the connection whose session key is
// session; the operation's progress reports are sent to c as they come.
func (s *Server) handle(ctx context.Context, c net.Conn, peer Peer, session string, line []byte) Response {
	req, perr := DecodeFrame(line)
	resp := Response{RequestID: req.RequestID}
	if perr != nil {
		resp.Error = perr
		return resp
	}
	caller := ops.Caller{Transport: audit.IPC, Peer: peer.String(), Session: session, RequestID: req.RequestID, Child: peer.Child}
	var (
		mu       sync.Mutex
		finished bool // no more progress once the call returned
	)
	progress := func(done, total float64, msg string) {
		mu.Lock()
		defer mu.Unlock()
		if finished {
			return
		}
		s.write(c, Response{RequestID: req.RequestID, Progress: &Progress{Done: done, Total: total, Message: msg}})
	}
	out, err := s.Registry.Call(ctx, caller, req.Method, req.Params, progress)
	mu.Lock()
	finished = true
	mu.Unlock()
	if err != nil {
		resp.Error = errcode.As(err)
		return resp
	}
	b, err := json.Marshal(out)
	if err != nil {
		resp.Error = errcode.New(errcode.Internal, "the result could not be encoded")
		return resp
	}
	resp.Result = b
	return resp
}

var errFrameTooLarge = errors.New("frame too large")

// readFrame returns the next line without its newline. A last line without
// a newline is returned with io.EOF. It never holds more than MaxFrame+1
// bytes of one line.
func readFrame(r *bufio.Reader) ([]byte, error) {
	var line []byte
	for {
		chunk, err := r.ReadSlice('\n')
		if len(line)+len(chunk) > MaxFrame+1 {
			return nil, errFrameTooLarge
		}
		line = append(line, chunk...)
		switch {
		case err == nil:
			return line[:len(line)-1], nil
		case !errors.Is(err, bufio.ErrBufferFull):
			return line, err
		}
	}
}

// or returns v, or def when v is not set.
func or[T int | time.Duration](v, def T) T {
	if v > 0 {
		return v
	}
	return def
}
