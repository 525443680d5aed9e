package fakeruntime

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"sync"
	"time"

	"github.com/hostlink/hostlink/internal/agent"
	"github.com/hostlink/hostlink/internal/agentapi"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/procs"
)

// Name is the fake runtime's name in configuration and operations.
const Name = "fake"

// Runtime is the adapter: it runs Argv (the fake program) through
// internal/procs, one process per session, and speaks its protocol.
type Runtime struct {
	Argv []string
	Env  map[string]string
}

var _ agent.Runtime = (*Runtime)(nil)

// Name implements agent.Runtime.
func (r *Runtime) Name() string { return Name }

// Probe starts the program and asks its version.
func (r *Runtime) Probe(ctx context.Context) agentapi.Readiness {
	c, err := r.dial(os.TempDir(), nil)
	if err != nil {
		return agentapi.Readiness{Reason: errcode.As(err).Message}
	}
	defer c.close()
	var init struct {
		Version  string
		LoggedIn bool `json:"logged_in"`
	}
	if err := c.call(ctx, "initialize", nil, &init); err != nil {
		return agentapi.Readiness{Installed: true, Reason: "initialize failed: " + err.Error()}
	}
	rd := agentapi.Readiness{Installed: true, Version: init.Version, Authenticated: &init.LoggedIn}
	return agent.Judge(rd, "fake", Version, !init.LoggedIn, "set nothing: the fake runtime was told it is logged out")
}

// Models asks the program for its models.
func (r *Runtime) Models(ctx context.Context) ([]agentapi.Model, error) {
	c, err := r.dial(os.TempDir(), nil)
	if err != nil {
		return nil, err
	}
	defer c.close()
	var init struct{ Models []agentapi.Model }
	if err := c.call(ctx, "initialize", nil, &init); err != nil {
		return nil, err
	}
	return init.Models, nil
}

// Start implements agent.Runtime.
func (r *Runtime) Start(ctx context.Context, spec agent.SessionSpec, sink agent.Sink) (agent.Session, error) {
	c, err := r.dial(spec.Dir, sink)
	if err != nil {
		return nil, err
	}
	var res struct {
		SessionID string `json:"session_id"`
	}
	err = c.call(ctx, "initialize", nil, nil)
	if err == nil {
		err = c.call(ctx, "session/start", sessionParams{Cwd: spec.Dir, Model: spec.Model, Access: string(spec.Access), StateDir: spec.StateDir}, &res)
	}
	if err != nil {
		c.close()
		return nil, err
	}
	c.session = res.SessionID
	c.start()
	return c, nil
}

// Resume implements agent.Runtime.
func (r *Runtime) Resume(ctx context.Context, spec agent.SessionSpec, id string, sink agent.Sink) (agent.Session, agent.TurnState, error) {
	dir := spec.Dir
	if dir == "" {
		dir = os.TempDir()
	}
	c, err := r.dial(dir, sink)
	if err != nil {
		return nil, agent.TurnState{}, err
	}
	var res struct {
		LastTurn *lastTurn `json:"last_turn"`
	}
	err = c.call(ctx, "initialize", nil, nil)
	if err == nil {
		err = c.call(ctx, "session/resume", sessionParams{SessionID: id, StateDir: spec.StateDir}, &res)
	}
	if err != nil {
		c.close()
		return nil, agent.TurnState{}, err
	}
	c.session = id
	c.start()
	st := agent.TurnState{Known: true}
	if l := res.LastTurn; l != nil {
		st.TurnID, st.Result = l.TurnID, l.Result
		if l.Status != "running" {
			st.Status = agent.TurnStatus(l.Status)
		}
	}
	return c, st, nil
}

// conn is one runtime process and its protocol state; it is the Session.
type conn struct {
	proc    *procs.Process
	stdin   io.WriteCloser
	sink    agent.Sink
	session string

	mu      sync.Mutex
	next    int
	calls   map[int]chan message
	closing bool
	ready   chan struct{} // closed by start or close
	once    sync.Once
	done    chan struct{}
	wmu     sync.Mutex
}

func (r *Runtime) dial(dir string, sink agent.Sink) (*conn, error) {
	if len(r.Argv) == 0 {
		return nil, errcode.New(agent.CodeRuntimeUnavailable, "the fake runtime has no program")
	}
	pr, pw := io.Pipe()
	p, err := procs.Start(procs.Spec{Argv: r.Argv, Dir: dir, Env: r.Env, Stdin: true}, pw, nil)
	if err != nil {
		pw.Close()
		return nil, err
	}
	go func() {
		p.Wait()
		pw.Close()
	}()
	c := &conn{proc: p, stdin: p.Stdin(), sink: sink, calls: map[int]chan message{},
		ready: make(chan struct{}), done: make(chan struct{})}
	go c.read(pr)
	return c, nil
}

// start lets notifications through to the sink: before it, only responses
// to the set-up calls are expected.
func (c *conn) start() { c.once.Do(func() { close(c.ready) }) }

func (c *conn) read(r io.Reader) {
	defer close(c.done)
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for sc.Scan() {
		var m message
		if json.Unmarshal(sc.Bytes(), &m) != nil {
			continue
		}
		if m.Method == "" {
			var id int
			json.Unmarshal(m.ID, &id)
			c.mu.Lock()
			ch := c.calls[id]
			delete(c.calls, id)
			c.mu.Unlock()
			if ch != nil {
				ch <- m
			}
			continue
		}
		<-c.ready
		c.mu.Lock()
		closing := c.closing
		c.mu.Unlock()
		if !closing {
			c.deliver(m)
		}
	}
	c.mu.Lock()
	closing := c.closing
	for id, ch := range c.calls {
		ch <- message{Error: &rpcError{Message: "the runtime process exited"}}
		delete(c.calls, id)
	}
	c.mu.Unlock()
	st, _ := c.proc.Wait()
	if c.sink != nil && !closing {
		select {
		case <-c.ready:
			c.sink.Exited(fmt.Errorf("exit status %d", st.ExitCode))
		default:
		}
	}
}

func (c *conn) deliver(m message) {
	if c.sink == nil {
		return
	}
	switch m.Method {
	case "item":
		var p itemParams
		json.Unmarshal(m.Params, &p)
		c.sink.Item(agent.Item{TurnID: p.TurnID, ItemID: p.ItemID, Kind: p.Kind, Phase: p.Phase, Text: p.Text, Data: p.Data})
	case "turn/completed":
		var p turnDone
		json.Unmarshal(m.Params, &p)
		c.sink.TurnEnded(agent.TurnEnd{TurnID: p.TurnID, Status: agent.TurnStatus(p.Status), Result: p.Result, Error: p.Error})
	case "request/withdrawn":
		var p struct{ ID string }
		json.Unmarshal(m.Params, &p)
		c.sink.Withdraw(p.ID)
	case "request/approval", "request/question":
		var id string
		json.Unmarshal(m.ID, &id)
		var p requestParams
		json.Unmarshal(m.Params, &p)
		req := agent.Request{ID: id, TurnID: p.TurnID, ItemID: p.ItemID, Kind: agent.KindApproval, Summary: p.Summary,
			Detail: p.Detail, Decisions: p.Decisions}
		if m.Method == "request/question" {
			req.Kind = agent.KindQuestion
			for _, q := range p.Questions {
				req.Questions = append(req.Questions, agentapi.Question{ID: q.ID, Text: q.Text, Options: q.Options, Other: q.Other})
			}
		}
		c.sink.Request(req)
	}
}

func (c *conn) write(m message) error {
	b, err := json.Marshal(m)
	if err != nil {
		return err
	}
	c.wmu.Lock()
	defer c.wmu.Unlock()
	_, err = c.stdin.Write(append(b, '\n'))
	return err
}

// call sends a request and waits for its response, decoded into out.
func (c *conn) call(ctx context.Context, method string, params, out any) error {
	c.mu.Lock()
	c.next++
	id := c.next
	ch := make(chan message, 1)
	c.calls[id] = ch
	c.mu.Unlock()
	var raw json.RawMessage
	if params != nil {
		raw, _ = json.Marshal(params)
	}
	if err := c.write(message{ID: json.RawMessage(strconv.Itoa(id)), Method: method, Params: raw}); err != nil {
		return errors.New("the runtime process is gone")
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return m.Error
		}
		if out != nil {
			return json.Unmarshal(m.Result, out)
		}
		return nil
	case <-ctx.Done():
		c.mu.Lock()
		delete(c.calls, id)
		c.mu.Unlock()
		return ctx.Err()
	}
}

func (c *conn) ID() string { return c.session }

func (c *conn) StartTurn(ctx context.Context, input string) (string, error) {
	var res struct {
		TurnID string `json:"turn_id"`
	}
	err := c.call(ctx, "turn/start", turnParams{SessionID: c.session, Input: input}, &res)
	return res.TurnID, err
}

func (c *conn) Steer(ctx context.Context, turnID, input string) error {
	return c.call(ctx, "turn/steer", turnParams{SessionID: c.session, TurnID: turnID, Input: input}, nil)
}

func (c *conn) Interrupt(ctx context.Context, turnID string) error {
	return c.call(ctx, "turn/interrupt", turnParams{SessionID: c.session, TurnID: turnID}, nil)
}

func (c *conn) Resolve(_ context.Context, requestID string, r agent.Resolution) error {
	var result any
	if r.Decision != nil {
		result = map[string]json.RawMessage{"decision": r.Decision}
	} else {
		result = map[string]any{"answers": r.Answers}
	}
	b, _ := json.Marshal(result)
	id, _ := json.Marshal(requestID)
	return c.write(message{ID: id, Result: b})
}

// Close closes the runtime's stdin, which ends it, and kills it if it has
// not exited shortly after.
func (c *conn) Close() error {
	c.close()
	return nil
}

func (c *conn) close() {
	c.mu.Lock()
	if c.closing {
		c.mu.Unlock()
		return
	}
	c.closing = true
	c.mu.Unlock()
	c.start() // a reader waiting to deliver drops the rest
	c.stdin.Close()
	select {
	case <-c.proc.Done():
	case <-time.After(2 * time.Second):
		c.proc.Terminate(time.Second)
	}
	<-c.done
}
