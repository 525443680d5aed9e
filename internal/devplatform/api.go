package devplatform

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"time"

	"github.com/hostlink/hostlink/internal/link/wire"
)

// SendRequest is POST /api/send's body.
type SendRequest struct {
	Peer    string          `json:"peer"` // "control" or a session id
	Type    string          `json:"type"`
	ID      string          `json:"id,omitempty"`
	Payload json.RawMessage `json:"payload,omitempty"`
	// PadBytes adds a field of this many bytes to the payload, to send
	// an oversized frame.
	PadBytes       int     `json:"pad_bytes,omitempty"`
	TimeoutSeconds float64 `json:"timeout_seconds,omitempty"` // default 60
	NoWait         bool    `json:"no_wait,omitempty"`
}

// CloseRequest is POST /api/close's body.
type CloseRequest struct {
	Peer   string `json:"peer"`
	Code   int    `json:"code"`
	Reason string `json:"reason,omitempty"`
}

// AttachRequest is POST /api/attach's body.
type AttachRequest struct {
	SessionID string `json:"session_id"`
	Path      string `json:"path"`
}

// PeerInfo is one entry of GET /api/peers.
type PeerInfo struct {
	Name         string     `json:"name"`
	Hello        wire.Hello `json:"hello"`
	Granted      []string   `json:"granted"`
	ConnectionID string     `json:"connection_id,omitempty"`
	Connected    time.Time  `json:"connected"`
}

// maxAPIBody bounds an API request: a frame plus padding instructions.
const maxAPIBody = wire.MaxFrameBytes + 1<<20

func (s *Server) apiRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/peers", s.api(func(r *http.Request) (any, int) {
		s.mu.Lock()
		defer s.mu.Unlock()
		out := []PeerInfo{}
		for _, p := range s.peers {
			out = append(out, PeerInfo{Name: p.Name, Hello: p.Hello, Granted: p.Granted, ConnectionID: p.ConnectionID, Connected: p.Connected})
		}
		return out, 200
	}))
	mux.HandleFunc("GET /api/events", s.api(func(r *http.Request) (any, int) { return s.Events(), 200 }))
	mux.HandleFunc("GET /api/frames", s.api(func(r *http.Request) (any, int) {
		p := s.Peer(r.URL.Query().Get("peer"))
		if p == nil {
			return map[string]string{"error": "no such peer"}, 404
		}
		return p.Frames(r.URL.Query().Get("type")), 200
	}))
	mux.HandleFunc("POST /api/config", s.api(func(r *http.Request) (any, int) {
		var c Config
		if err := json.NewDecoder(r.Body).Decode(&c); err != nil {
			return map[string]string{"error": "bad config"}, 400
		}
		s.SetConfig(c)
		return s.config(), 200
	}))
	mux.HandleFunc("POST /api/close", s.api(func(r *http.Request) (any, int) {
		var c CloseRequest
		if err := json.NewDecoder(r.Body).Decode(&c); err != nil {
			return map[string]string{"error": "bad request"}, 400
		}
		p := s.Peer(c.Peer)
		if p == nil {
			return map[string]string{"error": "no such peer"}, 404
		}
		p.Close(c.Code, c.Reason)
		return map[string]bool{"ok": true}, 200
	}))
	mux.HandleFunc("POST /api/attach", s.api(func(r *http.Request) (any, int) {
		var req AttachRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.SessionID == "" || req.Path == "" {
			return map[string]string{"error": "need session_id and path"}, 400
		}
		ctx, cancel := context.WithTimeout(r.Context(), 60*time.Second)
		defer cancel()
		out, err := s.Attach(ctx, req.SessionID, req.Path)
		if err != nil {
			return map[string]string{"error": err.Error()}, 409
		}
		return out, 200
	}))
	mux.HandleFunc("POST /api/send", s.api(func(r *http.Request) (any, int) {
		var req SendRequest
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
			return map[string]string{"error": "bad request"}, 400
		}
		p := s.Peer(req.Peer)
		if p == nil {
			return map[string]string{"error": "no such peer"}, 404
		}
		timeout := 60 * time.Second
		if req.TimeoutSeconds > 0 {
			timeout = time.Duration(req.TimeoutSeconds * float64(time.Second))
		}
		ctx, cancel := context.WithTimeout(r.Context(), timeout)
		defer cancel()
		b, id, err := Frame(req.Type, req.ID, req.Payload, req.PadBytes)
		if err != nil {
			return map[string]string{"error": err.Error()}, 400
		}
		if req.NoWait {
			if err := p.conn.SendRaw(ctx, b, 1<<30); err != nil {
				return map[string]string{"error": err.Error()}, 502
			}
			return map[string]string{"id": id}, 200
		}
		reply, err := p.RequestRaw(ctx, id, b)
		if err != nil {
			return map[string]string{"error": err.Error()}, 504
		}
		return reply, 200
	}))
}

// Frame builds a request frame; padBytes > 0 adds a "_pad" field of that
// many bytes to the payload.
func Frame(typ, id string, payload json.RawMessage, padBytes int) ([]byte, string, error) {
	if id == "" {
		id = wire.NewID()
	}
	if len(payload) == 0 {
		payload = json.RawMessage("{}")
	}
	if padBytes > 0 {
		var m map[string]any
		if err := json.Unmarshal(payload, &m); err != nil {
			return nil, "", err
		}
		m["_pad"] = strings.Repeat("x", padBytes)
		b, err := json.Marshal(m)
		if err != nil {
			return nil, "", err
		}
		payload = b
	}
	e := wire.Envelope{Type: typ, ID: id, TS: wire.Now(), Version: wire.Version.String(), Payload: payload}
	b, err := json.Marshal(e)
	return b, id, err
}

// api wraps a JSON handler with token checking and a body limit.
func (s *Server) api(h func(r *http.Request) (any, int)) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if !s.authorized(r) {
			http.Error(w, "unauthorized", http.StatusUnauthorized)
			return
		}
		r.Body = http.MaxBytesReader(w, r.Body, maxAPIBody)
		v, code := h(r)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		json.NewEncoder(w).Encode(v)
	}
}
