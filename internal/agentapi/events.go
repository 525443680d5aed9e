package agentapi

import "time"

// EventsArgs is read_agent_task_events' request.
type EventsArgs struct {
	TaskID    string `json:"task_id"`
	AfterSeq  int64  `json:"after_seq,omitempty" min:"0" max:"9007199254740991" jsonschema:"cursor: return events after this sequence number (0: from the start); pass next_after_seq"`
	MaxEvents int    `json:"max_events,omitempty" min:"0" max:"500" jsonschema:"page size, 1 to 500 (default 100)"`
}

// EventsResult is read_agent_task_events' response.
type EventsResult struct {
	Events       []Event `json:"events"`
	NextAfterSeq int64   `json:"next_after_seq"`
	More         bool    `json:"more" jsonschema:"more events are stored already"`
	Status       string  `json:"status"`
	Terminal     bool    `json:"terminal" jsonschema:"the task is finished: no more events will come once more is false"`
}

// EventSchema is the version of the event envelope.
const EventSchema = 1

// Event is one stored event of a task: the envelope every transport
// returns.
type Event struct {
	SchemaVersion int            `json:"schema_version"`
	TaskID        string         `json:"task_id"`
	Seq           int64          `json:"seq"`
	Time          time.Time      `json:"time"`
	Type          string         `json:"type"`
	SessionID     string         `json:"session_id,omitempty"`
	TurnID        string         `json:"turn_id,omitempty"`
	ItemID        string         `json:"item_id,omitempty"`
	RequestID     string         `json:"request_id,omitempty"`
	Data          map[string]any `json:"data,omitempty"`
}

// ResultArgs is read_agent_task_result's request.
type ResultArgs struct {
	TaskID   string `json:"task_id"`
	Offset   int64  `json:"offset,omitempty" min:"0" max:"9007199254740991" jsonschema:"byte offset; pass next_offset from the previous chunk"`
	MaxBytes int    `json:"max_bytes,omitempty" min:"0" max:"1048576" jsonschema:"chunk size, up to 1 MiB (default 64 KiB); chunks end on UTF-8 character boundaries"`
}

// ResultChunk is read_agent_task_result's response.
type ResultChunk struct {
	TaskID     string `json:"task_id"`
	Text       string `json:"text"`
	Offset     int64  `json:"offset"`
	NextOffset int64  `json:"next_offset"`
	EOF        bool   `json:"eof"`
	TotalBytes int64  `json:"total_bytes"`
	SHA256     string `json:"sha256" jsonschema:"of the whole result"`
}
