package commandapi

// RunArgs is run_command's and start_command's request.
type RunArgs struct {
	Workdir        string            `json:"workdir,omitempty" jsonschema:"workdir alias for cwd (see read_file)"`
	Cwd            string            `json:"cwd,omitempty" jsonschema:"working directory inside the workdir (default: its root)"`
	Argv           []string          `json:"argv,omitempty" jsonschema:"program and arguments, run without a shell; exactly one of argv and command"`
	Command        string            `json:"command,omitempty" jsonschema:"a command line for the shell named by shell"`
	Shell          string            `json:"shell,omitempty" enum:"auto,sh,bash,zsh,cmd,powershell,pwsh" jsonschema:"shell for command (default auto: zsh on macOS, bash (else sh) on Linux, cmd on Windows); with argv, a named shell (not auto) runs argv quoted for that shell, so its builtins work with the arguments unchanged"`
	Env            map[string]string `json:"env,omitempty" jsonschema:"variables merged over the safe baseline environment"`
	TimeoutSeconds float64           `json:"timeout_seconds,omitempty" min:"0" max:"604800" jsonschema:"kill the whole process tree after this long (default and maximum from config)"`
	Stdin          *string           `json:"stdin,omitempty" jsonschema:"run_command: text written to stdin, which is then closed; start_command: keep stdin open for send_command_input"`
	IdempotencyKey string            `json:"idempotency_key,omitempty" jsonschema:"a repeated request with the same key returns the first run instead of running again"`
	Sandbox        string            `json:"sandbox,omitempty" enum:"default,network,off" jsonschema:"default: the configured sandbox; network: the sandbox with network access; off: no sandbox. Anything but default is put to the local user as commands_unsandboxed, which asks by default"`
	// InlineHead, set only by an in-process transport (JSON cannot),
	// makes run_command's inline view of each stream its first InlineHead
	// bytes instead of [commands] inline_output_bytes of head and tail:
	// the platform link returns output up to its negotiated budget whole.
	InlineHead int64 `json:"-"`
}

// StreamSummary is the inline view of one output stream.
type StreamSummary struct {
	Head          string `json:"head" jsonschema:"start of the stream (UTF-8, cut at a character boundary)"`
	Tail          string `json:"tail,omitempty" jsonschema:"end of the stream, when it did not fit in head"`
	Bytes         int64  `json:"bytes" jsonschema:"bytes the command wrote"`
	StoredBytes   int64  `json:"stored_bytes" jsonschema:"bytes kept in the capture"`
	Truncated     bool   `json:"truncated" jsonschema:"output past the per-stream cap was counted but not kept"`
	InlineOmitted int64  `json:"inline_omitted" jsonschema:"bytes between head and tail; read them with read_command_output"`
	SHA256        string `json:"sha256,omitempty" jsonschema:"SHA-256 of the stored stream, once complete"`
}

// Receipt is what hostlink knows about a command's process.
type Receipt struct {
	CaptureID       string        `json:"capture_id"`
	Pid             int           `json:"pid,omitempty"`
	Status          string        `json:"status" enum:"pending,running,exited,killed,timed_out,incomplete"`
	ExitCode        *int          `json:"exit_code,omitempty" jsonschema:"the exit status; -1 when a signal, a timeout or kill_command ended the command; absent while running or when unknown"`
	Signal          string        `json:"signal,omitempty"`
	TimedOut        bool          `json:"timed_out"`
	StartedAt       string        `json:"started_at,omitempty"`
	EndedAt         string        `json:"ended_at,omitempty"`
	DurationSeconds float64       `json:"duration_seconds"`
	Stdout          StreamSummary `json:"stdout"`
	Stderr          StreamSummary `json:"stderr"`
	OutputTruncated bool          `json:"output_truncated" jsonschema:"some output is not inline (read it with read_command_output) or was not stored (past the per-stream cap)"`
	Reused          bool          `json:"reused,omitempty" jsonschema:"returned for a repeated idempotency key; the command was not run again"`
	Sandbox         string        `json:"sandbox,omitempty" jsonschema:"the confinement the command ran in, as measured (for example: workdir via namespaces+landlock; off)"`
	SandboxHint     string        `json:"sandbox_hint,omitempty" jsonschema:"when the command failed and its errors look like the sandbox's denials: which rule, which path or address, and how to allow it"`
}
