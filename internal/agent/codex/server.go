package codex

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/hostlink/hostlink/internal/sandbox"
	"io"
	"strconv"
	"sync"
	"time"

	"github.com/hostlink/hostlink/internal/agent"
	"github.com/hostlink/hostlink/internal/agent/agentcli"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/procs"
	"github.com/hostlink/hostlink/internal/version"
)

// message is one line of the app-server protocol, either way.
type message struct {
	ID     json.RawMessage `json:"id,omitempty"`
	Method string          `json:"method,omitempty"`
	Params json.RawMessage `json:"params,omitempty"`
	Result json.RawMessage `json:"result,omitempty"`
	Error  *rpcError       `json:"error,omitempty"`
}

type rpcError struct {
	Code    int    `json:"code"`
	Message string `json:"message"`
}

func (e *rpcError) Error() string { return fmt.Sprintf("%s (%d)", e.Message, e.Code) }

// errGone is every pending call's error once the app-server has ended.
var errGone = errors.New("the codex app-server exited")

// server is one `codex app-server` process and the threads attached to it.
type server struct {
	proc      *agentcli.Proc
	userAgent string

	mu      sync.Mutex
	next    int
	calls   map[int]chan message
	threads map[string]*session
	ended   bool
}

func startServer(ctx context.Context, argv []string, dir string, env map[string]string, stderr io.Writer, sb *sandbox.Policy) (*server, error) {
	s := &server{calls: map[int]chan message{}, threads: map[string]*session{}}
	p, err := agentcli.Start(agentcli.Spec{Argv: argv, Dir: dir, Env: env, Stderr: stderr, Sandbox: sb}, s.line, s.exit)
	if err != nil {
		return nil, err
	}
	s.proc = p
	yes := true
	var init InitializeResponse
	err = s.call(ctx, "initialize", InitializeParams{ClientInfo: ClientInfo{Name: "hostlink", Version: version.Version},
		Capabilities: &InitializeCapabilities{ExperimentalApi: &yes}}, &init)
	if err == nil {
		err = s.notify("initialized", nil)
	}
	if err != nil {
		p.Stop(0)
		var rerr *rpcError
		if errors.As(err, &rerr) && rerr.Code == -1 || errors.Is(err, errGone) {
			return nil, errGone
		}
		return nil, errcode.New(agent.CodeRuntimeUnavailable, "codex app-server did not initialize: %v", err)
	}
	s.userAgent = init.UserAgent
	return s, nil
}

func (s *server) dead() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.ended
}

// call sends a request and decodes its result into out (when not nil).
func (s *server) call(ctx context.Context, method string, params, out any) error {
	s.mu.Lock()
	if s.ended {
		s.mu.Unlock()
		return errGone
	}
	s.next++
	id := s.next
	ch := make(chan message, 1)
	s.calls[id] = ch
	s.mu.Unlock()
	raw, err := json.Marshal(params)
	if err != nil {
		return err
	}
	if err := s.proc.Send(message{ID: json.RawMessage(strconv.Itoa(id)), Method: method, Params: raw}); err != nil {
		return errGone
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return m.Error
		}
		if out != nil && len(m.Result) > 0 {
			return json.Unmarshal(m.Result, out)
		}
		return nil
	case <-ctx.Done():
		s.mu.Lock()
		delete(s.calls, id)
		s.mu.Unlock()
		return ctx.Err()
	}
}

func (s *server) notify(method string, params any) error {
	m := message{Method: method}
	if params != nil {
		m.Params, _ = json.Marshal(params)
	}
	return s.proc.Send(m)
}

// reply answers one of the app-server's requests.
func (s *server) reply(id json.RawMessage, result any, rerr *rpcError) error {
	m := message{ID: id, Error: rerr}
	if rerr == nil {
		m.Result, _ = json.Marshal(result)
	}
	return s.proc.Send(m)
}

// attach routes a thread's notifications and requests to sink.
func (s *server) attach(threadID string, sink agent.Sink) *session {
	sess := &session{srv: s, id: threadID, sink: sink, requests: map[string]pendingRequest{},
		messages: map[string]string{}, changes: map[string]any{}}
	s.mu.Lock()
	s.threads[threadID] = sess
	s.mu.Unlock()
	return sess
}

func (s *server) detach(sess *session) {
	s.mu.Lock()
	if s.threads[sess.id] == sess {
		delete(s.threads, sess.id)
	}
	s.mu.Unlock()
}

// line handles one message from the app-server, on the reading goroutine.
func (s *server) line(b []byte) {
	var m message
	if json.Unmarshal(b, &m) != nil {
		return
	}
	if m.Method == "" {
		var id int
		if json.Unmarshal(m.ID, &id) != nil {
			return
		}
		s.mu.Lock()
		ch := s.calls[id]
		delete(s.calls, id)
		s.mu.Unlock()
		if ch != nil {
			ch <- m
		}
		return
	}
	var routing struct {
		ThreadID string `json:"threadId"`
	}
	json.Unmarshal(m.Params, &routing)
	s.mu.Lock()
	sess := s.threads[routing.ThreadID]
	s.mu.Unlock()
	if m.ID != nil {
		if sess == nil || !sess.request(m) {
			// Not a thread of ours, or a request hostlink does not
			// relay: an error makes Codex fail closed.
			s.reply(m.ID, nil, &rpcError{Code: -32601, Message: "hostlink does not handle " + m.Method})
		}
		return
	}
	if sess != nil {
		sess.notification(m)
	}
}

// exit fails every pending call and tells every attached thread's sink.
func (s *server) exit(st procs.State) {
	s.mu.Lock()
	s.ended = true
	for id, ch := range s.calls {
		ch <- message{Error: &rpcError{Code: -1, Message: errGone.Error()}}
		delete(s.calls, id)
	}
	threads := make([]*session, 0, len(s.threads))
	for _, t := range s.threads {
		threads = append(threads, t)
	}
	s.threads = map[string]*session{}
	s.mu.Unlock()
	for _, t := range threads {
		t.exited(fmt.Errorf("the codex app-server exited (%s)", agentcli.Describe(st)))
	}
}

// defaultCallTimeout bounds calls made without a caller's deadline.
const defaultCallTimeout = 10 * time.Second
