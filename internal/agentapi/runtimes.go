package agentapi

// RuntimesArgs is list_agent_runtimes' (empty) request.
type RuntimesArgs struct{}

// RuntimeInfo is one runtime's readiness.
type RuntimeInfo struct {
	Name    string `json:"name"`
	Allowed bool   `json:"allowed" jsonschema:"agents.runtimes allows it"`
	Readiness
}

// RuntimesResult is list_agent_runtimes' response.
type RuntimesResult struct {
	Runtimes []RuntimeInfo `json:"runtimes"`
}

// Readiness is a runtime's state as its adapter's probe found it.
type Readiness struct {
	Installed     bool   `json:"installed"`
	Version       string `json:"version,omitempty"`
	Authenticated *bool  `json:"authenticated,omitempty" jsonschema:"absent when it cannot be checked read-only"`
	Ready         bool   `json:"ready"`
	Reason        string `json:"reason,omitempty" jsonschema:"why it is not ready"`
	// Checking: the check has not concluded yet (a CLI that starts slowly,
	// or one that did not answer within agents.probe_timeout_seconds):
	// readiness is unknown, so submit_agent_task accepts the task.
	Checking bool `json:"checking,omitempty" jsonschema:"the check has not concluded (a slow CLI): ask again"`
	// Provider is the model provider the runtime is configured to use,
	// where it has a choice (Codex's model_provider).
	Provider string `json:"provider,omitempty" jsonschema:"the model provider it is configured to use (Codex)"`
}

// ModelsArgs is list_agent_models' request.
type ModelsArgs struct {
	Runtime string `json:"runtime"`
}

// ModelsResult is list_agent_models' response.
type ModelsResult struct {
	Runtime   string  `json:"runtime"`
	Supported bool    `json:"supported" jsonschema:"false: the runtime cannot list its models (no list is guessed)"`
	Models    []Model `json:"models"`
}

// Model is one model a runtime offers.
type Model struct {
	ID          string `json:"id"`
	Name        string `json:"name,omitempty"`
	Description string `json:"description,omitempty"`
	Default     bool   `json:"default,omitempty"`
}
