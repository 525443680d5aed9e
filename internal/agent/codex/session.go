package codex

import (
	"context"
	"encoding/json"
	"strings"
	"sync"

	"github.com/hostlink/hostlink/internal/agent"
	"github.com/hostlink/hostlink/internal/agentapi"
	"github.com/hostlink/hostlink/internal/errcode"
)

// session is a Codex thread attached to the app-server; it is the task's
// agent.Session.
type session struct {
	srv   *server
	id    string
	sink  agent.Sink
	mode  string // collaboration mode of its turns, "" for the default
	model string // the thread's model, which a collaboration mode names

	mu       sync.Mutex
	closed   bool
	running  string                    // the turn in progress, as Codex reported it
	requests map[string]pendingRequest // Codex's open requests, by id
	messages map[string]string         // turn id → its newest agent message
	changes  map[string]any            // file-change item id → its changes (the diff)
}

// pendingRequest is a request of Codex's waiting for the user.
type pendingRequest struct {
	id     json.RawMessage
	method string
	params json.RawMessage
}

// item is the part of a ThreadItem (a union) the adapter reads.
type item struct {
	Type    string `json:"type"`
	ID      string `json:"id"`
	Text    string `json:"text"`
	Command string `json:"command"`
	Changes any    `json:"changes"`
}

func decodeItem(raw json.RawMessage) item {
	var it item
	json.Unmarshal(raw, &it)
	return it
}

// kinds maps Codex item types to the engine's item kinds.
var kinds = map[string]string{
	"agentMessage": "agent_message", "userMessage": "user_message", "commandExecution": "command",
	"fileChange": "file_change", "reasoning": "reasoning", "mcpToolCall": "tool_call", "webSearch": "web_search",
	"plan": "plan", "todoList": "plan",
}

func kindOf(t string) string {
	if k, ok := kinds[t]; ok {
		return k
	}
	return t
}

func (s *session) ID() string { return s.id }

func textInput(text string) []json.RawMessage {
	b, _ := json.Marshal(map[string]any{"type": "text", "text": text, "text_elements": []any{}})
	return []json.RawMessage{b}
}

func (s *session) StartTurn(ctx context.Context, input string) (string, error) {
	var params any = TurnStartParams{ThreadID: s.id, Input: textInput(input)}
	if s.mode != "" {
		// collaborationMode is an experimental field, absent from the
		// generated (stable) TurnStartParams.
		params = struct {
			TurnStartParams
			CollaborationMode CollaborationMode `json:"collaborationMode"`
		}{params.(TurnStartParams), CollaborationMode{Mode: s.mode, Settings: Settings{Model: s.model}}}
	}
	var res TurnStartResponse
	if err := s.srv.call(ctx, "turn/start", params, &res); err != nil {
		return "", errcode.New(agent.CodeRuntimeUnavailable, "codex turn/start: %v", err)
	}
	return res.Turn.ID, nil
}

func (s *session) Steer(ctx context.Context, turnID, input string) error {
	return s.srv.call(ctx, "turn/steer", TurnSteerParams{ThreadID: s.id, ExpectedTurnID: turnID, Input: textInput(input)}, nil)
}

func (s *session) Interrupt(ctx context.Context, turnID string) error {
	return s.srv.call(ctx, "turn/interrupt", TurnInterruptParams{ThreadID: s.id, TurnID: turnID}, nil)
}

// Close detaches and unsubscribes the thread; a turn still running is
// interrupted, since nothing would answer its requests any more. The
// thread stays in Codex's history, to be resumed.
func (s *session) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	turn := s.running
	s.mu.Unlock()
	s.srv.detach(s)
	ctx, cancel := context.WithTimeout(context.Background(), defaultCallTimeout)
	defer cancel()
	if turn != "" {
		s.Interrupt(ctx, turn)
	}
	// Unloaded, the thread can be resumed by another app-server.
	s.srv.call(ctx, "thread/unsubscribe", map[string]string{"threadId": s.id}, nil)
	return nil
}

func (s *session) exited(err error) {
	s.mu.Lock()
	closed := s.closed
	s.mu.Unlock()
	if !closed {
		s.sink.Exited(err)
	}
}

// notification translates one of the thread's notifications for the sink.
func (s *session) notification(m message) {
	switch m.Method {
	case "turn/started":
		var n TurnStartedNotification
		json.Unmarshal(m.Params, &n)
		s.mu.Lock()
		s.running = n.Turn.ID
		s.mu.Unlock()
	case "item/started", "item/completed":
		var n struct {
			Item   json.RawMessage `json:"item"`
			TurnID string          `json:"turnId"`
		}
		json.Unmarshal(m.Params, &n)
		it := decodeItem(n.Item)
		phase := agent.ItemStarted
		if m.Method == "item/completed" {
			phase = agent.ItemCompleted
		}
		s.mu.Lock()
		if it.Type == "fileChange" {
			s.changes[it.ID] = it.Changes
		}
		if it.Type == "agentMessage" && phase == agent.ItemCompleted {
			s.messages[n.TurnID] = it.Text
		}
		s.mu.Unlock()
		var data map[string]any
		json.Unmarshal(n.Item, &data)
		delete(data, "type")
		delete(data, "id")
		text := it.Text
		if it.Type == "commandExecution" {
			text = it.Command
		}
		s.sink.Item(agent.Item{TurnID: n.TurnID, ItemID: it.ID, Kind: kindOf(it.Type), Phase: phase, Text: text, Data: data})
	case "item/agentMessage/delta":
		var n AgentMessageDeltaNotification
		json.Unmarshal(m.Params, &n)
		s.sink.Item(agent.Item{TurnID: n.TurnID, ItemID: n.ItemID, Kind: "agent_message", Phase: agent.ItemDelta, Text: n.Delta})
	case "item/commandExecution/outputDelta":
		var n struct {
			Delta  string `json:"delta"`
			ItemID string `json:"itemId"`
			TurnID string `json:"turnId"`
		}
		json.Unmarshal(m.Params, &n)
		s.sink.Item(agent.Item{TurnID: n.TurnID, ItemID: n.ItemID, Kind: "command", Phase: agent.ItemDelta, Text: n.Delta})
	case "error":
		var n ErrorNotification
		json.Unmarshal(m.Params, &n)
		s.sink.Item(agent.Item{TurnID: n.TurnID, Kind: "error", Phase: agent.ItemCompleted, Text: n.Error.Message,
			Data: map[string]any{"will_retry": n.WillRetry}})
	case "serverRequest/resolved":
		var n ServerRequestResolvedNotification
		json.Unmarshal(m.Params, &n)
		key := requestKey(n.RequestID)
		s.mu.Lock()
		_, open := s.requests[key]
		delete(s.requests, key)
		s.mu.Unlock()
		if open {
			s.sink.Withdraw(key)
		}
	case "turn/completed":
		var n TurnCompletedNotification
		json.Unmarshal(m.Params, &n)
		s.mu.Lock()
		result := s.messages[n.Turn.ID]
		delete(s.messages, n.Turn.ID)
		if s.running == n.Turn.ID {
			s.running = ""
		}
		open := s.requests
		s.requests = map[string]pendingRequest{}
		s.mu.Unlock()
		for key := range open {
			s.sink.Withdraw(key)
		}
		te := agent.TurnEnd{TurnID: n.Turn.ID, Status: agent.TurnFailed}
		switch n.Turn.Status {
		case "completed":
			te.Status, te.Result = agent.TurnCompleted, result
		case "interrupted":
			te.Status = agent.TurnInterrupted
		}
		if n.Turn.Error != nil {
			te.Error = n.Turn.Error.Message
		}
		s.sink.TurnEnded(te)
	}
}

// requestKey is the engine's id for a Codex request id (a number or a
// string on the wire).
func requestKey(id json.RawMessage) string {
	var str string
	if json.Unmarshal(id, &str) == nil {
		return str
	}
	return strings.TrimSpace(string(id))
}

var (
	approvalDecisions   = []string{"accept", "acceptForSession", "decline", "cancel"}
	permissionDecisions = []string{"accept", "acceptForSession", "decline"}
)

func rawList(names []string) []json.RawMessage {
	out := make([]json.RawMessage, len(names))
	for i, n := range names {
		out[i], _ = json.Marshal(n)
	}
	return out
}

// request relays one of Codex's requests about this thread, reporting
// whether it is one hostlink relays.
func (s *session) request(m message) bool {
	key := requestKey(m.ID)
	req := agent.Request{ID: key, Kind: agent.KindApproval}
	switch m.Method {
	case "item/commandExecution/requestApproval":
		var p CommandExecutionRequestApprovalParams
		var offered struct {
			AvailableDecisions []json.RawMessage `json:"availableDecisions"`
		}
		json.Unmarshal(m.Params, &p)
		json.Unmarshal(m.Params, &offered)
		req.TurnID, req.ItemID = p.TurnID, p.ItemID
		req.Summary = "run a command: " + p.Command
		req.Detail = map[string]any{"command": p.Command, "cwd": p.Cwd}
		if p.Reason != "" {
			req.Detail["reason"] = p.Reason
		}
		req.Decisions = offered.AvailableDecisions
		if len(req.Decisions) == 0 {
			req.Decisions = rawList(approvalDecisions)
			if len(p.ProposedExecpolicyAmendment) > 0 {
				b, _ := json.Marshal(map[string]any{"acceptWithExecpolicyAmendment": map[string]any{"execpolicy_amendment": p.ProposedExecpolicyAmendment}})
				req.Decisions = append(req.Decisions, b)
			}
		}
	case "item/fileChange/requestApproval":
		var p FileChangeRequestApprovalParams
		json.Unmarshal(m.Params, &p)
		req.TurnID, req.ItemID = p.TurnID, p.ItemID
		req.Summary = "change files"
		req.Detail = map[string]any{}
		if p.Reason != "" {
			req.Detail["reason"] = p.Reason
		}
		if p.GrantRoot != "" {
			req.Detail["grant_root"] = p.GrantRoot
		}
		s.mu.Lock()
		if c := s.changes[p.ItemID]; c != nil {
			req.Detail["changes"] = c
		}
		s.mu.Unlock()
		req.Decisions = rawList(approvalDecisions)
	case "item/permissions/requestApproval":
		var p PermissionsRequestApprovalParams
		json.Unmarshal(m.Params, &p)
		req.TurnID, req.ItemID = p.TurnID, p.ItemID
		req.Summary = "grant more permissions"
		var perms any
		json.Unmarshal(p.Permissions, &perms)
		req.Detail = map[string]any{"permissions": perms, "cwd": p.Cwd}
		if p.Reason != "" {
			req.Detail["reason"] = p.Reason
		}
		req.Decisions = rawList(permissionDecisions)
	case "item/tool/requestUserInput":
		var p ToolRequestUserInputParams
		json.Unmarshal(m.Params, &p)
		req.Kind = agent.KindQuestion
		req.TurnID, req.ItemID = p.TurnID, p.ItemID
		req.Summary = "the agent asks"
		for _, q := range p.Questions {
			aq := agentapi.Question{ID: q.ID, Header: q.Header, Text: q.Question, Other: q.IsOther != nil && *q.IsOther,
				Secret: q.IsSecret != nil && *q.IsSecret}
			for _, o := range q.Options {
				aq.Options = append(aq.Options, o.Label)
			}
			req.Questions = append(req.Questions, aq)
		}
	default:
		return false
	}
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return false
	}
	s.requests[key] = pendingRequest{id: m.ID, method: m.Method, params: m.Params}
	s.mu.Unlock()
	s.sink.Request(req)
	return true
}

// Resolve answers a request with the user's decision or answers, in the
// shape Codex expects for that request.
func (s *session) Resolve(_ context.Context, requestID string, r agent.Resolution) error {
	s.mu.Lock()
	p, ok := s.requests[requestID]
	delete(s.requests, requestID)
	s.mu.Unlock()
	if !ok {
		return errcode.New(agent.CodeRequestNotFound, "codex is not waiting on request %s", requestID)
	}
	var result any
	switch p.method {
	case "item/tool/requestUserInput":
		answers := map[string]any{}
		for id, a := range r.Answers {
			answers[id] = map[string]any{"answers": a}
		}
		result = map[string]any{"answers": answers}
	case "item/permissions/requestApproval":
		var d string
		json.Unmarshal(r.Decision, &d)
		var params struct {
			Permissions json.RawMessage `json:"permissions"`
		}
		json.Unmarshal(p.params, &params)
		switch d {
		case "accept":
			result = map[string]any{"permissions": params.Permissions, "scope": "turn"}
		case "acceptForSession":
			result = map[string]any{"permissions": params.Permissions, "scope": "session"}
		default:
			result = map[string]any{"permissions": map[string]any{}}
		}
	default:
		result = map[string]json.RawMessage{"decision": r.Decision}
	}
	return s.srv.reply(p.id, result, nil)
}
