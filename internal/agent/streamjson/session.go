package streamjson

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/hostlink/hostlink/internal/agent"
	"github.com/hostlink/hostlink/internal/agent/agentcli"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/procs"
)

// Dialect is how one CLI's protocol differs from Claude Code's.
type Dialect struct {
	// Name is the runtime's name, for messages.
	Name string
	// EchoToolUseID: permission replies carry the request's tool_use_id
	// as toolUseID (Qoder).
	EchoToolUseID bool
}

// Config starts a session's process.
type Config struct {
	Dialect Dialect
	Spec    agentcli.Spec
	// SessionID is the session's id when hostlink chose it (--session-id)
	// or resumes it; otherwise it is learnt from the CLI's init message.
	SessionID string
}

// Decisions hostlink offers for a tool permission, in the vocabulary of
// the other runtimes: accept runs the tool as asked, decline refuses it
// and lets the agent go on, cancel refuses it and interrupts the turn.
var Decisions = []string{"accept", "decline", "cancel"}

// Session is one CLI process and its session; it is an agent.Session.
type Session struct {
	d    Dialect
	proc *agentcli.Proc
	sink agent.Sink

	mu       sync.Mutex
	id       string
	next     int
	calls    map[string]chan *inbound
	turn     string // the running turn, "" between turns
	turns    int
	queued   int  // user messages of the running turn without a result yet
	stopping bool // an interrupt was asked for the running turn
	closing  bool
	ready    bool                   // initialized: from now on the sink hears of an exit
	requests map[string]toolRequest // open can_use_tool requests by request_id
	lastText string                 // the running turn's newest assistant text
	msgID    string                 // the message being streamed
}

var _ agent.Session = (*Session)(nil)

// Start starts the CLI, sends initialize, and returns the session and
// what initialize reported. Until a turn starts nothing reaches sink.
//
// A process that ends before it answers initialize is started once more:
// nothing has happened in the session yet, and a CLI that starts slowly
// (qodercli takes 9 s or more) can be ended by a busy machine.
func Start(ctx context.Context, c Config, sink agent.Sink) (*Session, InitInfo, error) {
	s, info, err := start(ctx, c, sink)
	if errors.Is(err, errExited) && ctx.Err() == nil {
		s, info, err = start(ctx, c, sink)
	}
	if err != nil {
		return nil, InitInfo{}, errcode.New(agent.CodeRuntimeUnavailable, "%s did not initialize: %v", c.Dialect.Name, err)
	}
	return s, info, nil
}

// errExited fails the calls waiting when the process ends.
var errExited = errors.New("the process exited")

func start(ctx context.Context, c Config, sink agent.Sink) (*Session, InitInfo, error) {
	s := &Session{d: c.Dialect, sink: sink, id: c.SessionID, calls: map[string]chan *inbound{}, requests: map[string]toolRequest{}}
	p, err := agentcli.Start(c.Spec, s.line, s.exit)
	if err != nil {
		return nil, InitInfo{}, err
	}
	s.proc = p
	var info InitInfo
	if err := s.control(ctx, map[string]any{"subtype": "initialize", "hooks": map[string]any{}}, &info); err != nil {
		s.mu.Lock()
		s.closing = true
		s.mu.Unlock()
		p.Kill()
		return nil, InitInfo{}, err
	}
	s.mu.Lock()
	s.ready = true
	s.mu.Unlock()
	return s, info, nil
}

// control sends a control request and waits for its response.
func (s *Session) control(ctx context.Context, req map[string]any, out any) error {
	s.mu.Lock()
	s.next++
	id := "hl_" + strconv.Itoa(s.next)
	ch := make(chan *inbound, 1)
	s.calls[id] = ch
	s.mu.Unlock()
	if err := s.proc.Send(controlRequest{Type: "control_request", RequestID: id, Request: req}); err != nil {
		return err
	}
	select {
	case m := <-ch:
		if m == nil {
			return errExited
		}
		if m.Response.Subtype != "success" {
			return fmt.Errorf("%s", m.Response.Error)
		}
		if out != nil && len(m.Response.Response) > 0 {
			return json.Unmarshal(m.Response.Response, out)
		}
		return nil
	case <-ctx.Done():
		s.mu.Lock()
		delete(s.calls, id)
		s.mu.Unlock()
		return ctx.Err()
	}
}

// ID is the CLI's session id.
func (s *Session) ID() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.id
}

func (s *Session) send(text, priority string) error {
	var sid string
	s.mu.Lock()
	sid = s.id
	s.mu.Unlock()
	return s.proc.Send(userMessage{Type: "user", Message: userContent{Role: "user", Content: text}, SessionID: sid, Priority: priority})
}

// StartTurn sends a user message; the turn's id is made up by hostlink,
// since the protocol has none.
func (s *Session) StartTurn(_ context.Context, input string) (string, error) {
	s.mu.Lock()
	if s.turn != "" {
		s.mu.Unlock()
		return "", errcode.New(agent.CodeInvalidState, "a turn is running")
	}
	s.turns++
	s.turn = "turn-" + strconv.Itoa(s.turns)
	s.queued, s.stopping, s.lastText = 1, false, ""
	turn := s.turn
	s.mu.Unlock()
	if err := s.send(input, ""); err != nil {
		return "", errcode.New(agent.CodeRuntimeUnavailable, "%s: %v", s.d.Name, err)
	}
	return turn, nil
}

// Steer sends a user message with priority "now": the CLI stops what it
// is streaming and takes the message at once, in the same turn.
func (s *Session) Steer(_ context.Context, turnID, input string) error {
	s.mu.Lock()
	if s.turn == "" || s.turn != turnID {
		s.mu.Unlock()
		return errcode.New(agent.CodeInvalidState, "turn %s is not running", turnID)
	}
	s.queued++
	s.mu.Unlock()
	return s.send(input, "now")
}

// Interrupt sends the interrupt control request; the turn's result then
// reports it aborted.
func (s *Session) Interrupt(ctx context.Context, turnID string) error {
	s.mu.Lock()
	if s.turn == "" || s.turn != turnID {
		s.mu.Unlock()
		return nil
	}
	s.stopping = true
	s.mu.Unlock()
	return s.control(ctx, map[string]any{"subtype": "interrupt"}, nil)
}

// Resolve answers a can_use_tool request.
func (s *Session) Resolve(_ context.Context, requestID string, r agent.Resolution) error {
	s.mu.Lock()
	req, ok := s.requests[requestID]
	delete(s.requests, requestID)
	s.mu.Unlock()
	if !ok {
		return errcode.New(agent.CodeRequestNotFound, "%s is not waiting on request %s", s.d.Name, requestID)
	}
	var res map[string]any
	if r.Answers != nil {
		res = map[string]any{"behavior": "allow", "updatedInput": answered(req.Input, r.Answers)}
	} else {
		var d string
		json.Unmarshal(r.Decision, &d)
		switch d {
		case "accept":
			input := req.Input
			if len(input) == 0 {
				input = json.RawMessage("{}")
			}
			res = map[string]any{"behavior": "allow", "updatedInput": input}
		case "cancel":
			res = map[string]any{"behavior": "deny", "message": "The user refused this and stopped the turn.", "interrupt": true}
		default:
			res = map[string]any{"behavior": "deny", "message": "The user refused this."}
		}
	}
	if s.d.EchoToolUseID && req.ToolUseID != "" {
		res["toolUseID"] = req.ToolUseID
	}
	return s.proc.Send(controlResponse{Type: "control_response",
		Response: map[string]any{"subtype": "success", "request_id": requestID, "response": res}})
}

// answered is AskUserQuestion's input with the user's answers added:
// question text → chosen label(s), comma-separated.
func answered(input json.RawMessage, answers map[string][]string) map[string]any {
	var in map[string]any
	json.Unmarshal(input, &in)
	if in == nil {
		in = map[string]any{}
	}
	var ask askInput
	json.Unmarshal(input, &ask)
	out := map[string]string{}
	for i, q := range ask.Questions {
		if a, ok := answers[questionID(i)]; ok {
			out[q.Question] = strings.Join(a, ", ")
		}
	}
	in["answers"] = out
	return in
}

func questionID(i int) string { return "q" + strconv.Itoa(i+1) }

// Close ends the process: stdin closed, a short wait, then its tree is
// ended.
func (s *Session) Close() error {
	s.mu.Lock()
	if s.closing {
		s.mu.Unlock()
		return nil
	}
	s.closing = true
	s.mu.Unlock()
	s.proc.Stop(3 * time.Second)
	return nil
}

func (s *Session) exit(st procs.State) {
	s.mu.Lock()
	for id, ch := range s.calls {
		ch <- nil
		delete(s.calls, id)
	}
	closing, ready := s.closing, s.ready
	running := s.turn != ""
	s.mu.Unlock()
	if !closing && ready && s.sink != nil {
		err := fmt.Errorf("%s exited (%s)", s.d.Name, agentcli.Describe(st))
		if !running {
			err = nil
		}
		s.sink.Exited(err)
	}
}
