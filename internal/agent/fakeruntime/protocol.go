package fakeruntime

import "encoding/json"

// message is one line of the protocol, either way: a request (id and
// method), a notification (method only) or a response (id only).
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

func (e *rpcError) Error() string { return e.Message }

type sessionParams struct {
	SessionID string `json:"session_id,omitempty"`
	Cwd       string `json:"cwd,omitempty"`
	Model     string `json:"model,omitempty"`
	Access    string `json:"access,omitempty"`
	StateDir  string `json:"state_dir"`
}

type turnParams struct {
	SessionID string `json:"session_id"`
	TurnID    string `json:"turn_id,omitempty"`
	Input     string `json:"input,omitempty"`
}

type itemParams struct {
	TurnID string         `json:"turn_id"`
	ItemID string         `json:"item_id"`
	Kind   string         `json:"kind"`
	Phase  string         `json:"phase"`
	Text   string         `json:"text,omitempty"`
	Data   map[string]any `json:"data,omitempty"`
}

type turnDone struct {
	TurnID string `json:"turn_id"`
	Status string `json:"status"`
	Result string `json:"result,omitempty"`
	Error  string `json:"error,omitempty"`
}

type question struct {
	ID      string   `json:"id"`
	Text    string   `json:"text"`
	Options []string `json:"options,omitempty"`
	Other   bool     `json:"allow_other,omitempty"`
}

type requestParams struct {
	TurnID    string            `json:"turn_id"`
	ItemID    string            `json:"item_id"`
	Summary   string            `json:"summary"`
	Detail    map[string]any    `json:"detail,omitempty"`
	Decisions []json.RawMessage `json:"decisions,omitempty"`
	Questions []question        `json:"questions,omitempty"`
}

type lastTurn struct {
	TurnID string `json:"turn_id"`
	Status string `json:"status"` // running, completed, interrupted, failed
	Result string `json:"result,omitempty"`
}

// sessionFile is a session as the fake runtime keeps it on disk.
type sessionFile struct {
	ID     string     `json:"id"`
	Cwd    string     `json:"cwd"`
	Access string     `json:"access"` // read-only sessions cannot write, like a sandbox
	Turns  []lastTurn `json:"turns"`
}
