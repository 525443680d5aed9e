package streamjson

import "encoding/json"

// inbound is any message the CLI writes; fields are those of every type.
type inbound struct {
	Type      string `json:"type"`
	Subtype   string `json:"subtype"`
	SessionID string `json:"session_id"`

	// assistant, user
	Message *struct {
		ID      string          `json:"id"`
		Role    string          `json:"role"`
		Content json.RawMessage `json:"content"`
	} `json:"message"`
	ParentToolUseID *string `json:"parent_tool_use_id"`

	// stream_event
	Event *struct {
		Type    string `json:"type"`
		Message *struct {
			ID string `json:"id"`
		} `json:"message"`
		Delta *struct {
			Type string `json:"type"`
			Text string `json:"text"`
		} `json:"delta"`
	} `json:"event"`

	// control_request, control_cancel_request
	RequestID string          `json:"request_id"`
	Request   json.RawMessage `json:"request"`

	// control_response
	Response *struct {
		Subtype   string          `json:"subtype"`
		RequestID string          `json:"request_id"`
		Response  json.RawMessage `json:"response"`
		Error     string          `json:"error"`
	} `json:"response"`

	// result
	IsError        bool     `json:"is_error"`
	Result         string   `json:"result"`
	TerminalReason string   `json:"terminal_reason"`
	Errors         []string `json:"errors"`
}

// block is one content block of an assistant or user message.
type block struct {
	Type      string          `json:"type"`
	Text      string          `json:"text"`
	ID        string          `json:"id"`
	Name      string          `json:"name"`
	Input     json.RawMessage `json:"input"`
	ToolUseID string          `json:"tool_use_id"`
	Content   json.RawMessage `json:"content"`
	IsError   bool            `json:"is_error"`
}

// toolRequest is a can_use_tool control request.
type toolRequest struct {
	Subtype               string          `json:"subtype"`
	ToolName              string          `json:"tool_name"`
	Input                 json.RawMessage `json:"input"`
	PermissionSuggestions json.RawMessage `json:"permission_suggestions"`
	ToolUseID             string          `json:"tool_use_id"`
	BlockedPath           string          `json:"blocked_path"`
	DecisionReason        string          `json:"decision_reason"`
}

// askInput is the AskUserQuestion tool's input.
type askInput struct {
	Questions []struct {
		Question    string `json:"question"`
		Header      string `json:"header"`
		MultiSelect bool   `json:"multiSelect"`
		Options     []struct {
			Label       string `json:"label"`
			Description string `json:"description"`
		} `json:"options"`
	} `json:"questions"`
}

// userMessage is a prompt or follow-up.
type userMessage struct {
	Type            string      `json:"type"`
	Message         userContent `json:"message"`
	ParentToolUseID *string     `json:"parent_tool_use_id"`
	SessionID       string      `json:"session_id"`
	Priority        string      `json:"priority,omitempty"`
}

type userContent struct {
	Role    string `json:"role"`
	Content string `json:"content"`
}

type controlRequest struct {
	Type      string `json:"type"`
	RequestID string `json:"request_id"`
	Request   any    `json:"request"`
}

type controlResponse struct {
	Type     string         `json:"type"`
	Response map[string]any `json:"response"`
}

// InitInfo is what the initialize control request returns.
type InitInfo struct {
	Models []struct {
		Value       string `json:"value"`
		DisplayName string `json:"displayName"`
		Description string `json:"description"`
	} `json:"models"`
}
