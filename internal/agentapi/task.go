package agentapi

import "time"

// SubmitArgs is submit_agent_task's request.
type SubmitArgs struct {
	Runtime         string `json:"runtime" jsonschema:"runtime name, from list_agent_runtimes"`
	Workdir         string `json:"workdir" jsonschema:"workdir alias; its agent_mode must allow agents"`
	Cwd             string `json:"cwd,omitempty" jsonschema:"working directory relative to the workdir, / separated (default .)"`
	Prompt          string `json:"prompt"`
	Model           string `json:"model,omitempty" jsonschema:"model id from list_agent_models; default: the runtime's"`
	Access          string `json:"access,omitempty" enum:"read-only,workspace-write" jsonschema:"default read-only; workspace-write needs agent_mode workspace-write and holds the workdir's writer lease for each turn"`
	IdempotencyKey  string `json:"idempotency_key,omitempty" jsonschema:"the same key with the same request returns the first task; with a different request it is IDEMPOTENCY_CONFLICT"`
	ContinueTaskID  string `json:"continue_task_id,omitempty" jsonschema:"continue the runtime session of this finished task (same runtime and workdir): the runtime sees its history"`
	QueueIfNotReady bool   `json:"queue_if_not_ready,omitempty" jsonschema:"submit even if the runtime is not installed or not ready (otherwise RUNTIME_NOT_READY with the readiness reason)"`
}

// SubmitResult is submit_agent_task's response.
type SubmitResult struct {
	TaskInfo
	Existing bool `json:"existing" jsonschema:"the idempotency key named an existing task, returned instead of a new one"`
}

// TaskArgs names a task: cancel_agent_task's request.
type TaskArgs struct {
	TaskID string `json:"task_id"`
}

// GetArgs is get_agent_task's request.
type GetArgs struct {
	TaskID          string `json:"task_id"`
	IncludeManifest bool   `json:"include_manifest,omitempty" jsonschema:"include the execution manifest (canonical JSON)"`
}

// TaskInfo describes a task: get_agent_task's response, and that of the
// operations that change a task.
type TaskInfo struct {
	TaskID            string        `json:"task_id"`
	Status            string        `json:"status" enum:"queued,starting,running,waiting_approval,waiting_input,completed,failed,cancelled,interrupted"`
	Terminal          bool          `json:"terminal"`
	Reason            string        `json:"reason,omitempty" jsonschema:"why it failed, was cancelled or interrupted, or how it was reconciled"`
	Runtime           string        `json:"runtime"`
	Model             string        `json:"model,omitempty"`
	Workdir           string        `json:"workdir"`
	Cwd               string        `json:"cwd"`
	Access            string        `json:"access"`
	Created           time.Time     `json:"created"`
	Updated           time.Time     `json:"updated"`
	Ended             *time.Time    `json:"ended,omitempty"`
	SessionID         string        `json:"session_id,omitempty" jsonschema:"the runtime's session or thread id"`
	TurnID            string        `json:"turn_id,omitempty"`
	Turns             int           `json:"turns"`
	LastSeq           int64         `json:"last_seq" jsonschema:"sequence number of the newest event"`
	ManifestSHA256    string        `json:"manifest_sha256"`
	PolicyFingerprint string        `json:"policy_fingerprint"`
	Manifest          any           `json:"manifest,omitempty" jsonschema:"the execution manifest, as hashed into manifest_sha256"`
	Result            *ResultInfo   `json:"result,omitempty"`
	Pending           []PendingInfo `json:"pending" jsonschema:"approvals and questions waiting for an answer"`
}

// ResultInfo describes a task's stored result.
type ResultInfo struct {
	Bytes  int64  `json:"bytes"`
	SHA256 string `json:"sha256"`
}

// PendingInfo is an approval or question waiting for an answer.
type PendingInfo struct {
	RequestID string     `json:"request_id"`
	Kind      string     `json:"kind" enum:"approval,question"`
	Expires   time.Time  `json:"expires"`
	Summary   string     `json:"summary,omitempty"`
	Detail    any        `json:"detail,omitempty" jsonschema:"what the runtime says about the request: command, cwd, reason, diff..."`
	Decisions []Decision `json:"decisions,omitempty" jsonschema:"for an approval: the decisions the runtime offers; answer with one value exactly"`
	Questions []Question `json:"questions,omitempty"`
}

// Decision is one offered approval decision.
type Decision struct {
	Value any  `json:"value" jsonschema:"pass this back as decision, unchanged"`
	Known bool `json:"known" jsonschema:"false for a variant hostlink does not know; it is still offered as the runtime sent it"`
}

// Question is one question a runtime asks, as a pending request shows
// it (and as the adapters report it).
type Question struct {
	ID      string   `json:"id"`
	Header  string   `json:"header,omitempty"`
	Text    string   `json:"text"`
	Options []string `json:"options,omitempty"`
	Other   bool     `json:"allow_other,omitempty" jsonschema:"free text besides the options is accepted"`
	Secret  bool     `json:"secret,omitempty"`
}
