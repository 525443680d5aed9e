package agentapi

// ApprovalArgs is respond_agent_approval's request.
type ApprovalArgs struct {
	TaskID    string `json:"task_id"`
	RequestID string `json:"request_id"`
	Decision  any    `json:"decision" jsonschema:"one of the request's offered decisions, exactly as offered (a string such as accept, or an object)"`
}

// QuestionArgs is answer_agent_question's request.
type QuestionArgs struct {
	TaskID    string              `json:"task_id"`
	RequestID string              `json:"request_id"`
	Answers   map[string][]string `json:"answers" jsonschema:"question id → answers (options, or free text where allowed)"`
}

// MessageArgs is send_agent_message's request.
type MessageArgs struct {
	TaskID string `json:"task_id"`
	Text   string `json:"text"`
	Mode   string `json:"mode,omitempty" enum:"steer,follow_up" jsonschema:"steer adds to the running turn; follow_up runs as the next turn after it (default steer)"`
}

// Message modes.
const (
	MessageSteer    = "steer"
	MessageFollowUp = "follow_up"
)
