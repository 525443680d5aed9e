package commandapi

// Started is start_command's response.
type Started struct {
	CaptureID string `json:"capture_id" jsonschema:"names the command in command_status, send_command_input, kill_command and read_command_output"`
	Pid       int    `json:"pid,omitempty"`
	Reused    bool   `json:"reused,omitempty" jsonschema:"a repeated idempotency key: the first run, not a new one"`
	Status    string `json:"status"`
}

// CaptureArgs names a command by its capture id.
type CaptureArgs struct {
	CaptureID string `json:"capture_id"`
}

// InputArgs is send_command_input's request.
type InputArgs struct {
	CaptureID string `json:"capture_id"`
	Data      string `json:"data,omitempty" jsonschema:"bytes to write to stdin"`
	Encoding  string `json:"encoding,omitempty" enum:"utf-8,base64"`
	Close     bool   `json:"close,omitempty" jsonschema:"close stdin after writing"`
}

// InputResult is send_command_input's response.
type InputResult struct {
	BytesWritten int  `json:"bytes_written"`
	Closed       bool `json:"closed"`
}

// KillArgs is kill_command's request.
type KillArgs struct {
	CaptureID    string  `json:"capture_id"`
	GraceSeconds float64 `json:"grace_seconds,omitempty" min:"0" max:"60" jsonschema:"time between the graceful signal and the hard kill (default 2, at most 60)"`
}

// ListArgs is list_commands' request.
type ListArgs struct {
	Status string `json:"status,omitempty" enum:"running,exited,killed,timed_out,incomplete" jsonschema:"only commands in this state"`
	Limit  int    `json:"limit,omitempty" min:"0" max:"500" jsonschema:"most commands returned, newest first (default 50, at most 500)"`
}

// ListEntry is one command in list_commands.
type ListEntry struct {
	CaptureID string   `json:"capture_id"`
	Op        string   `json:"op"`
	Argv      []string `json:"argv,omitempty"`
	Command   string   `json:"command,omitempty"`
	Workdir   string   `json:"workdir,omitempty"`
	Cwd       string   `json:"cwd,omitempty"`
	Pid       int      `json:"pid,omitempty"`
	Status    string   `json:"status"`
	ExitCode  *int     `json:"exit_code,omitempty"`
	CreatedAt string   `json:"created_at"`
	ExpiresAt string   `json:"expires_at"`
}

// ListResult is list_commands' response.
type ListResult struct {
	Commands []ListEntry `json:"commands"`
}

// ReadArgs is read_command_output's request.
type ReadArgs struct {
	CaptureID string `json:"capture_id"`
	Stream    string `json:"stream" enum:"stdout,stderr"`
	Offset    int64  `json:"offset,omitempty" min:"0" max:"9007199254740991" jsonschema:"byte offset in the stream"`
	Length    int    `json:"length,omitempty" min:"0" max:"65536" jsonschema:"bytes to read, at most 65536 (the default)"`
	Text      bool   `json:"text,omitempty" jsonschema:"return UTF-8 text ending at a character boundary instead of base64 bytes"`
}

// ReadResult is read_command_output's response.
type ReadResult struct {
	CaptureID    string `json:"capture_id"`
	Stream       string `json:"stream"`
	Offset       int64  `json:"offset"`
	Content      string `json:"content"`
	Encoding     string `json:"encoding" enum:"utf-8,base64"`
	Length       int    `json:"length" jsonschema:"bytes in this chunk"`
	SHA256       string `json:"sha256" jsonschema:"SHA-256 of this chunk's bytes"`
	NextOffset   int64  `json:"next_offset"`
	StreamLength int64  `json:"stream_length" jsonschema:"bytes stored so far"`
	TotalBytes   int64  `json:"total_bytes" jsonschema:"bytes the command wrote so far, stored or not"`
	Complete     bool   `json:"complete" jsonschema:"the stream will not grow"`
	StreamSHA256 string `json:"stream_sha256,omitempty" jsonschema:"SHA-256 of the whole stored stream, once complete"`
	Truncated    bool   `json:"truncated"`
}
