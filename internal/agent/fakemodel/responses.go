package fakemodel

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"
)

// Responses starts a fake OpenAI Responses API: POST /v1/responses,
// answered as a stream (response.created, response.output_text.delta,
// response.output_item.done, response.completed). Codex reaches it as a
// custom model provider with wire_api "responses".
func Responses(t testing.TB, script Script) *Server {
	return start(t, func(s *Server) http.Handler {
		mux := http.NewServeMux()
		mux.HandleFunc("POST /v1/responses", func(w http.ResponseWriter, r *http.Request) {
			var body struct {
				Model string           `json:"model"`
				Input []map[string]any `json:"input"`
				Tools []map[string]any `json:"tools"`
			}
			if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
				http.Error(w, err.Error(), http.StatusBadRequest)
				return
			}
			req := &Request{API: "responses", Model: body.Model}
			for _, tl := range body.Tools {
				if n, ok := tl["name"].(string); ok {
					req.Tools = append(req.Tools, n)
				}
			}
			for _, in := range body.Input {
				typ, _ := in["type"].(string)
				role, _ := in["role"].(string)
				switch {
				case typ == "message" || typ == "" && role != "":
					req.Conversation = append(req.Conversation, Entry{Role: role, Kind: "text", Text: text(in["content"])})
				case typ == "function_call" || typ == "custom_tool_call":
					id, _ := in["call_id"].(string)
					name, _ := in["name"].(string)
					a, _ := in["arguments"].(string)
					if a == "" {
						a, _ = in["input"].(string)
					}
					req.Conversation = append(req.Conversation, Entry{Role: "assistant", Kind: "call", Name: name, CallID: id, Text: a})
				case typ == "function_call_output" || typ == "custom_tool_call_output":
					id, _ := in["call_id"].(string)
					out := text(in["output"])
					if m, ok := in["output"].(map[string]any); ok {
						out = text(m["content"])
					}
					req.Conversation = append(req.Conversation, Entry{Role: "tool", Kind: "result", CallID: id, Text: out})
				}
			}
			s.record(req)
			reply := script(req)
			n := len(s.Requests())
			ev := newSSE(w, r)
			respID := fmt.Sprintf("resp_%d", n)
			if !ev.event("response.created", map[string]any{"type": "response.created", "response": map[string]any{"id": respID}}) {
				return
			}
			if reply.Text != "" {
				msgID := fmt.Sprintf("msg_%d", n)
				ev.event("response.output_item.added", map[string]any{"type": "response.output_item.added", "output_index": 0,
					"item": map[string]any{"type": "message", "id": msgID, "role": "assistant", "content": []any{}}})
				for _, c := range chunks(reply.Text, reply.Chunks) {
					if !ev.wait(reply.Delay) || !ev.event("response.output_text.delta",
						map[string]any{"type": "response.output_text.delta", "item_id": msgID, "output_index": 0, "content_index": 0, "delta": c}) {
						return
					}
				}
				ev.event("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": 0,
					"item": map[string]any{"type": "message", "id": msgID, "role": "assistant", "status": "completed",
						"content": []any{map[string]any{"type": "output_text", "text": reply.Text, "annotations": []any{}}}}})
			}
			for i, c := range reply.Calls {
				callID := fmt.Sprintf("call_%d_%d", n, i)
				item := map[string]any{"type": "function_call", "id": fmt.Sprintf("fc_%d_%d", n, i), "call_id": callID,
					"name": c.Name, "arguments": argsJSON(c.Args), "status": "completed"}
				if c.Input != "" {
					item = map[string]any{"type": "custom_tool_call", "id": fmt.Sprintf("ctc_%d_%d", n, i), "call_id": callID,
						"name": c.Name, "input": c.Input, "status": "completed"}
				}
				ev.event("response.output_item.done", map[string]any{"type": "response.output_item.done", "output_index": i + 1, "item": item})
			}
			ev.event("response.completed", map[string]any{"type": "response.completed", "response": map[string]any{
				"id": respID, "usage": map[string]any{"input_tokens": 10, "input_tokens_details": map[string]any{"cached_tokens": 0},
					"output_tokens": 5, "output_tokens_details": map[string]any{"reasoning_tokens": 0}, "total_tokens": 15}}})
		})
		return mux
	})
}
