package fakemodel

import (
	"encoding/json"
	"net"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"
)

// Entry is one element of a conversation, flattened: a message's text, a
// tool call, or a tool call's result.
type Entry struct {
	Role   string // user, assistant, system, developer, tool
	Kind   string // text, call, result
	Text   string // the text, a call's arguments, or a result's output
	Name   string // a call's tool name
	CallID string
}

// Request is one model call as the CLI made it.
type Request struct {
	API          string // "responses" or "messages"
	Model        string
	Conversation []Entry
	Tools        []string
}

// LastUser is the text of the newest user entry.
func (r *Request) LastUser() string {
	for i := len(r.Conversation) - 1; i >= 0; i-- {
		if e := r.Conversation[i]; e.Role == "user" && e.Kind == "text" {
			return e.Text
		}
	}
	return ""
}

// UserSaid reports whether any user text contains s.
func (r *Request) UserSaid(s string) bool {
	for _, e := range r.Conversation {
		if e.Role == "user" && e.Kind == "text" && strings.Contains(e.Text, s) {
			return true
		}
	}
	return false
}

// Results are the tool results in the conversation, oldest first.
func (r *Request) Results() []Entry {
	var out []Entry
	for _, e := range r.Conversation {
		if e.Kind == "result" {
			out = append(out, e)
		}
	}
	return out
}

// Reply is what the model answers to one request.
type Reply struct {
	// Text is streamed in Chunks pieces (default 3), Delay apart.
	Text   string
	Chunks int
	Delay  time.Duration
	// Calls follow the text.
	Calls []Call
}

// Call is a tool call. Args is a JSON object for a function tool; Input is
// the raw input of a free-form tool (Codex's apply_patch).
type Call struct {
	Name  string
	Args  any
	Input string
}

// Script says what the model answers.
type Script func(*Request) Reply

// Server is a running fake model server.
type Server struct {
	// URL is the server's base URL (http://127.0.0.1:PORT).
	URL string

	mu   sync.Mutex
	reqs []*Request
	srv  *http.Server
	ln   net.Listener
}

// Requests returns every model request so far.
func (s *Server) Requests() []*Request {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]*Request(nil), s.reqs...)
}

func (s *Server) record(r *Request) {
	s.mu.Lock()
	s.reqs = append(s.reqs, r)
	s.mu.Unlock()
}

// start serves the handler routes builds for s. The handlers get s from
// start rather than from a variable assigned after Serve began: requests
// arrive from other processes, so nothing orders such an assignment
// before a handler's read.
func start(t testing.TB, routes func(s *Server) http.Handler) *Server {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &Server{URL: "http://" + ln.Addr().String(), ln: ln}
	s.srv = &http.Server{Handler: routes(s)}
	go s.srv.Serve(ln)
	t.Cleanup(func() { s.srv.Close() })
	return s
}

// chunks splits text into n pieces.
func chunks(text string, n int) []string {
	if n <= 0 {
		n = 3
	}
	r := []rune(text)
	if len(r) < n {
		n = max(len(r), 1)
	}
	var out []string
	for i := range n {
		out = append(out, string(r[i*len(r)/n:(i+1)*len(r)/n]))
	}
	return out
}

// sse writes server-sent events, flushing each.
type sse struct {
	w http.ResponseWriter
	r *http.Request
}

func newSSE(w http.ResponseWriter, r *http.Request) *sse {
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-cache")
	w.WriteHeader(http.StatusOK)
	return &sse{w: w, r: r}
}

func (s *sse) event(name string, data any) bool {
	b, _ := json.Marshal(data)
	if _, err := s.w.Write([]byte("event: " + name + "\ndata: " + string(b) + "\n\n")); err != nil {
		return false
	}
	s.w.(http.Flusher).Flush()
	return s.r.Context().Err() == nil
}

// wait sleeps d unless the client goes away first.
func (s *sse) wait(d time.Duration) bool {
	if d <= 0 {
		return s.r.Context().Err() == nil
	}
	select {
	case <-time.After(d):
		return true
	case <-s.r.Context().Done():
		return false
	}
}

// text returns the text of a content value: a string, or a list of parts
// with text fields.
func text(v any) string {
	switch c := v.(type) {
	case string:
		return c
	case []any:
		var b strings.Builder
		for _, p := range c {
			if m, ok := p.(map[string]any); ok {
				if s, ok := m["text"].(string); ok {
					b.WriteString(s)
				}
			}
		}
		return b.String()
	}
	return ""
}

func argsJSON(v any) string {
	if v == nil {
		return "{}"
	}
	b, _ := json.Marshal(v)
	return string(b)
}
