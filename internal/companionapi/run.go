package companionapi

import "github.com/hostlink/hostlink/internal/errcode"

// RunArgs is companion_run_command's request.
type RunArgs struct {
	Companion      string            `json:"companion,omitempty" jsonschema:"companion id or name (see companion_status); optional when one is connected"`
	Argv           []string          `json:"argv,omitempty" jsonschema:"program and arguments, run without a shell; exactly one of argv and command"`
	Command        string            `json:"command,omitempty" jsonschema:"a command line for the shell named by shell"`
	Shell          string            `json:"shell,omitempty" enum:"auto,sh,bash,zsh,cmd,powershell,pwsh"`
	Cwd            string            `json:"cwd,omitempty" jsonschema:"absolute directory on the companion's host (default: its home)"`
	Env            map[string]string `json:"env,omitempty"`
	TimeoutSeconds float64           `json:"timeout_seconds,omitempty" min:"0" max:"604800"`
	IdempotencyKey string            `json:"idempotency_key,omitempty" jsonschema:"a repeated key returns the first run (and retries its output transfer) instead of running again"`
}

// RunResult is companion_run_command's response.
type RunResult struct {
	Companion string  `json:"companion"`
	Receipt   Receipt `json:"receipt"`
	Transfer  string  `json:"transfer" enum:"system_command_output_v1,inline" jsonschema:"how the output came: verified chunks, or the bounded inline path of an older companion"`
	Stdout    string  `json:"stdout" jsonschema:"the output as text (invalid UTF-8 shown as U+FFFD)"`
	Stderr    string  `json:"stderr"`
	// Cut reports text past the per-stream delivery bound: the stream was
	// transferred and verified whole, but not all of it is in Stdout.
	StdoutCut     bool           `json:"stdout_cut,omitempty"`
	StderrCut     bool           `json:"stderr_cut,omitempty"`
	TransferError *errcode.Error `json:"transfer_error,omitempty" jsonschema:"the output did not arrive intact; the receipt stands and the command is not run again"`
}

// StreamMeta summarizes one stream of a companion's command.
type StreamMeta struct {
	Bytes       int64  `json:"bytes" jsonschema:"bytes the command wrote"`
	StoredBytes int64  `json:"stored_bytes" jsonschema:"bytes kept in the companion's capture"`
	SHA256      string `json:"sha256,omitempty" jsonschema:"SHA-256 of the stored bytes"`
	Truncated   bool   `json:"truncated" jsonschema:"output past the companion's cap was not stored"`
}

// Receipt is a companion command's process receipt.
type Receipt struct {
	CaptureID string     `json:"capture_id"`
	Pid       int        `json:"pid,omitempty"`
	Status    string     `json:"status" enum:"pending,running,exited,killed,timed_out,incomplete"`
	ExitCode  *int       `json:"exit_code,omitempty"`
	Signal    string     `json:"signal,omitempty"`
	Reason    string     `json:"reason,omitempty"`
	StartedAt string     `json:"started_at,omitempty"`
	EndedAt   string     `json:"ended_at,omitempty"`
	Reused    bool       `json:"reused,omitempty" jsonschema:"a repeated idempotency key: the first run, not a new one"`
	Sandbox   string     `json:"sandbox,omitempty" jsonschema:"the confinement the command ran in on the host, as measured"`
	Stdout    StreamMeta `json:"stdout"`
	Stderr    StreamMeta `json:"stderr"`
}
