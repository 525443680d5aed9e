package streamjson

import (
	"encoding/json"
	"strings"

	"github.com/hostlink/hostlink/internal/agent"
	"github.com/hostlink/hostlink/internal/agentapi"
)

// line handles one message from the CLI, on the reading goroutine.
func (s *Session) line(b []byte) {
	var m inbound
	if json.Unmarshal(b, &m) != nil {
		return
	}
	s.mu.Lock()
	if m.SessionID != "" && s.id == "" {
		s.id = m.SessionID
	}
	turn, closing := s.turn, s.closing
	s.mu.Unlock()
	switch m.Type {
	case "control_response":
		if m.Response == nil {
			return
		}
		s.mu.Lock()
		ch := s.calls[m.Response.RequestID]
		delete(s.calls, m.Response.RequestID)
		s.mu.Unlock()
		if ch != nil {
			ch <- &m
		}
		return
	}
	if closing || turn == "" || s.sink == nil {
		if m.Type == "control_request" {
			// Nothing can answer it: refuse, so the CLI does not wait.
			s.deny(m.RequestID)
		}
		return
	}
	switch m.Type {
	case "assistant":
		s.assistant(turn, &m)
	case "user":
		s.toolResults(turn, &m)
	case "stream_event":
		if e := m.Event; e != nil {
			switch {
			case e.Type == "message_start" && e.Message != nil:
				s.mu.Lock()
				s.msgID = e.Message.ID
				s.mu.Unlock()
			case e.Type == "content_block_delta" && e.Delta != nil && e.Delta.Type == "text_delta":
				s.mu.Lock()
				id := s.msgID
				s.mu.Unlock()
				s.sink.Item(agent.Item{TurnID: turn, ItemID: id, Kind: "agent_message", Phase: agent.ItemDelta, Text: e.Delta.Text})
			}
		}
	case "control_request":
		s.controlRequest(turn, &m)
	case "control_cancel_request":
		s.mu.Lock()
		_, open := s.requests[m.RequestID]
		delete(s.requests, m.RequestID)
		s.mu.Unlock()
		if open {
			s.sink.Withdraw(m.RequestID)
		}
	case "result":
		s.result(turn, &m)
	}
}

func (s *Session) deny(requestID string) {
	s.proc.Send(controlResponse{Type: "control_response", Response: map[string]any{"subtype": "success",
		"request_id": requestID, "response": map[string]any{"behavior": "deny", "message": "hostlink is not running a turn"}}})
}

func (s *Session) assistant(turn string, m *inbound) {
	if m.Message == nil {
		return
	}
	var blocks []block
	json.Unmarshal(m.Message.Content, &blocks)
	for i, b := range blocks {
		switch b.Type {
		case "text":
			if m.ParentToolUseID == nil {
				s.mu.Lock()
				s.lastText = b.Text
				s.mu.Unlock()
			}
			id := m.Message.ID
			if len(blocks) > 1 {
				id += "#" + string(rune('0'+i%10))
			}
			s.sink.Item(agent.Item{TurnID: turn, ItemID: id, Kind: "agent_message", Phase: agent.ItemCompleted, Text: b.Text})
		case "tool_use":
			var input any
			json.Unmarshal(b.Input, &input)
			s.sink.Item(agent.Item{TurnID: turn, ItemID: b.ID, Kind: "tool_call", Phase: agent.ItemStarted, Text: b.Name,
				Data: map[string]any{"tool": b.Name, "input": input}})
		case "thinking":
			s.sink.Item(agent.Item{TurnID: turn, ItemID: m.Message.ID, Kind: "reasoning", Phase: agent.ItemCompleted, Text: b.Text})
		}
	}
}

func (s *Session) toolResults(turn string, m *inbound) {
	if m.Message == nil {
		return
	}
	var blocks []block
	if json.Unmarshal(m.Message.Content, &blocks) != nil {
		return
	}
	for _, b := range blocks {
		if b.Type != "tool_result" {
			continue
		}
		s.sink.Item(agent.Item{TurnID: turn, ItemID: b.ToolUseID, Kind: "tool_call", Phase: agent.ItemCompleted,
			Text: contentText(b.Content), Data: map[string]any{"is_error": b.IsError}})
	}
}

// contentText is a tool result's text: a string or a list of text parts.
func contentText(raw json.RawMessage) string {
	var str string
	if json.Unmarshal(raw, &str) == nil {
		return str
	}
	var parts []block
	json.Unmarshal(raw, &parts)
	var b strings.Builder
	for _, p := range parts {
		b.WriteString(p.Text)
	}
	return b.String()
}

func (s *Session) controlRequest(turn string, m *inbound) {
	var req toolRequest
	json.Unmarshal(m.Request, &req)
	if req.Subtype != "can_use_tool" {
		s.proc.Send(controlResponse{Type: "control_response", Response: map[string]any{"subtype": "error",
			"request_id": m.RequestID, "error": "hostlink does not handle " + req.Subtype}})
		return
	}
	s.mu.Lock()
	s.requests[m.RequestID] = req
	s.mu.Unlock()
	var input map[string]any
	json.Unmarshal(req.Input, &input)
	r := agent.Request{ID: m.RequestID, TurnID: turn, ItemID: req.ToolUseID, Kind: agent.KindApproval}
	if req.ToolName == "AskUserQuestion" {
		var ask askInput
		json.Unmarshal(req.Input, &ask)
		r.Kind, r.Summary = agent.KindQuestion, "the agent asks"
		for i, q := range ask.Questions {
			aq := agentapi.Question{ID: questionID(i), Header: q.Header, Text: q.Question, Other: true}
			for _, o := range q.Options {
				aq.Options = append(aq.Options, o.Label)
			}
			r.Questions = append(r.Questions, aq)
		}
		s.sink.Request(r)
		return
	}
	r.Summary = summary(req.ToolName, input)
	r.Detail = map[string]any{"tool": req.ToolName, "input": input}
	if req.DecisionReason != "" {
		r.Detail["reason"] = req.DecisionReason
	}
	if req.BlockedPath != "" {
		r.Detail["blocked_path"] = req.BlockedPath
	}
	r.Decisions = make([]json.RawMessage, len(Decisions))
	for i, d := range Decisions {
		r.Decisions[i], _ = json.Marshal(d)
	}
	s.sink.Request(r)
}

// summary says what a tool permission is for.
func summary(tool string, input map[string]any) string {
	str := func(k string) string { v, _ := input[k].(string); return v }
	switch {
	case str("command") != "":
		return "run a command: " + str("command")
	case str("file_path") != "":
		return tool + " " + str("file_path")
	case str("path") != "":
		return tool + " " + str("path")
	}
	return "use " + tool
}

// result ends the turn once every user message of it has its result.
func (s *Session) result(turn string, m *inbound) {
	s.mu.Lock()
	if s.queued > 0 {
		s.queued--
	}
	aborted := strings.HasPrefix(m.TerminalReason, "aborted") || m.Subtype == "error_during_execution"
	// A steer's message aborts what was streaming: that result is not
	// the turn's end, the steer's is.
	if s.queued > 0 && !s.stopping {
		s.mu.Unlock()
		return
	}
	stopping := s.stopping
	text := s.lastText
	s.turn, s.queued, s.stopping = "", 0, false
	open := s.requests
	s.requests = map[string]toolRequest{}
	s.mu.Unlock()
	for id := range open {
		s.sink.Withdraw(id)
	}
	te := agent.TurnEnd{TurnID: turn}
	switch {
	case stopping && aborted:
		te.Status = agent.TurnInterrupted
	case m.IsError || m.Subtype != "success":
		te.Status = agent.TurnFailed
		te.Error = m.Result
		if te.Error == "" {
			te.Error = strings.Join(append([]string{m.Subtype}, m.Errors...), ": ")
		}
	default:
		te.Status, te.Result = agent.TurnCompleted, m.Result
		if te.Result == "" {
			te.Result = text
		}
	}
	s.sink.TurnEnded(te)
}
