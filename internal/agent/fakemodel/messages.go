package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
)

// Messages starts a fake Anthropic Messages API: POST /v1/messages,
// streamed (message_start, content_block_start/delta/stop, message_delta,
// message_stop) or, when the request does not ask for a stream, one JSON
// message. Claude Code reaches it through ANTHROPIC_BASE_URL.
func Messages(t testing.TB, script Script) *Server {
	return start(t, func(s *Server) http.Handler {
		mux := http.NewServeMux()
		mux.HandleFunc("POST /v1/messages", func(w http.ResponseWriter, r *http.Request) {
			var body struct {
				Model    string           `json:"model"`
				Stream   bool             `json:"stream"`
				Messages []map[string]any `json:"messages"`
				Tools    []map[string]any `json:"tools"`
			}
			if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			req := &Request{API: "messages", Model: body.Model}
			for _, tl := range body.Tools {
				if n, ok := tl["name"].(string); ok {
					req.Tools = append(req.Tools, n)
				}
			}
			for _, m := range body.Messages {
				role, _ := m["role"].(string)
				parts, ok := m["content"].([]any)
				if !ok {
					req.Conversation = append(req.Conversation, Entry{Role: role, Kind: "text", Text: text(m["content"])})
					continue
				}
				for _, p := range parts {
					b, _ := p.(map[string]any)
					switch b["type"] {
					case "text":
						t, _ := b["text"].(string)
						req.Conversation = append(req.Conversation, Entry{Role: role, Kind: "text", Text: t})
					case "tool_use":
						id, _ := b["id"].(string)
						name, _ := b["name"].(string)
						req.Conversation = append(req.Conversation, Entry{Role: role, Kind: "call", Name: name, CallID: id, Text: argsJSON(b["input"])})
					case "tool_result":
						id, _ := b["tool_use_id"].(string)
						req.Conversation = append(req.Conversation, Entry{Role: "tool", Kind: "result", CallID: id, Text: text(b["content"])})
					}
				}
			}
			s.record(req)
			reply := script(req)
			n := len(s.Requests())
			stop := "end_turn"
			if len(reply.Calls) > 0 {
				stop = "tool_use"
			}
			usage := map[string]any{"input_tokens": 10, "output_tokens": 5}
			if !body.Stream {
				var content []any
				if reply.Text != "" {
					content = append(content, map[string]any{"type": "text", "text": reply.Text})
				}
				for i, c := range reply.Calls {
					content = append(content, map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%d_%d", n, i), "name": c.Name, "input": c.Args})
				}
				w.Header().Set("Content-Type", "application/json")
				json.NewEncoder(w).Encode(map[string]any{"id": fmt.Sprintf("msg_%d", n), "type": "message", "role": "assistant",
					"model": body.Model, "content": content, "stop_reason": stop, "stop_sequence": nil, "usage": usage})
				return
			}
			ev := newSSE(w, r)
			if !ev.event("message_start", map[string]any{"type": "message_start", "message": map[string]any{
				"id": fmt.Sprintf("msg_%d", n), "type": "message", "role": "assistant", "model": body.Model,
				"content": []any{}, "stop_reason": nil, "stop_sequence": nil, "usage": usage}}) {
				return
			}
			idx := 0
			if reply.Text != "" {
				ev.event("content_block_start", map[string]any{"type": "content_block_start", "index": idx,
					"content_block": map[string]any{"type": "text", "text": ""}})
				for _, c := range chunks(reply.Text, reply.Chunks) {
					if !ev.wait(reply.Delay) || !ev.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx,
						"delta": map[string]any{"type": "text_delta", "text": c}}) {
						return
					}
				}
				ev.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
				idx++
			}
			for i, c := range reply.Calls {
				ev.event("content_block_start", map[string]any{"type": "content_block_start", "index": idx,
					"content_block": map[string]any{"type": "tool_use", "id": fmt.Sprintf("toolu_%d_%d", n, i), "name": c.Name, "input": map[string]any{}}})
				ev.event("content_block_delta", map[string]any{"type": "content_block_delta", "index": idx,
					"delta": map[string]any{"type": "input_json_delta", "partial_json": argsJSON(c.Args)}})
				ev.event("content_block_stop", map[string]any{"type": "content_block_stop", "index": idx})
				idx++
			}
			ev.event("message_delta", map[string]any{"type": "message_delta",
				"delta": map[string]any{"stop_reason": stop, "stop_sequence": nil}, "usage": map[string]any{"output_tokens": 5}})
			ev.event("message_stop", map[string]any{"type": "message_stop"})
		})
		mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) { http.NotFound(w, r) })
		return mux
	})
}
