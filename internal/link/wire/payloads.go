package wire

import "encoding/json"

// Message types of protocol v1.1 and hostlink's additions. The
// computer-use ones are in computer.go.
const (
	TypeHello          = "HELLO"
	TypeHelloAck       = "HELLO_ACK"
	TypeAck            = "ACK"
	TypeError          = "ERROR"
	TypePing           = "PING"
	TypePong           = "PONG"
	TypeStatus         = "STATUS"
	TypeSessionRevoked = "SESSION_REVOKED"

	TypeFileRead         = "FILE_READ"
	TypeFileContents     = "FILE_CONTENTS"
	TypeFileWrite        = "FILE_WRITE"
	TypeFileStat         = "FILE_STAT"
	TypeFileStatResponse = "FILE_STAT_RESPONSE"
	TypeFileList         = "FILE_LIST"
	TypeFileListResponse = "FILE_LIST_RESPONSE"
	TypeFileDelete       = "FILE_DELETE"
	TypeFileMove         = "FILE_MOVE"
	TypeExecuteCommand   = "EXECUTE_COMMAND"
	TypeCommandResult    = "COMMAND_RESULT"

	TypeDirectoryListRequest  = "DIRECTORY_LIST_REQUEST"
	TypeDirectoryListResponse = "DIRECTORY_LIST_RESPONSE"
	TypeAttachSession         = "ATTACH_SESSION"
	TypeSessionAttached       = "SESSION_ATTACHED"
	TypeActivateSession       = "ACTIVATE_SESSION"
	TypeSessionActivated      = "SESSION_ACTIVATED"
	TypeRestoreSession        = "RESTORE_SESSION"
	TypeSessionRestored       = "SESSION_RESTORED"
	TypeDetachSession         = "DETACH_SESSION"

	// TypeOperationCall runs any registry operation by name (hostlink
	// addition, capability "operations"); the reply is OPERATION_RESULT.
	TypeOperationCall   = "OPERATION_CALL"
	TypeOperationResult = "OPERATION_RESULT"
)

// Hello is HELLO's payload.
type Hello struct {
	ShimVersion     string `json:"shim_version"`
	ProtocolVersion string `json:"protocol_version"`
	MachineID       string `json:"machine_id"`
	// DisplayName labels the machine in the platform's folder picker (the
	// host name, at most 128 bytes).
	DisplayName      string   `json:"display_name,omitempty"`
	Platform         string   `json:"platform"`
	Arch             string   `json:"arch"`
	ScreenResolution *[2]int  `json:"screen_resolution"`
	Capabilities     []string `json:"capabilities"`
	AllowedRoot      *string  `json:"allowed_root"`
	LocalLLMModels   []string `json:"local_llm_models"`
	HardwareDevices  []any    `json:"hardware_devices"`
	// The computer-use features this data connection serves (COMPUTER_USE.md).
	ComputerUseFeatures       []string `json:"computer_use_features,omitempty"`
	ComputerUseFeaturesCoarse []string `json:"computer_use_features_coarse,omitempty"`
}

// HelloAck is HELLO_ACK's payload. Pointers tell an omitted field (which
// takes upstream's default, see DefaultPeerVersion and link's defaults)
// from a zero one, which is invalid.
type HelloAck struct {
	SessionID             *string  `json:"session_id"`
	ConnectionID          *string  `json:"connection_id"`
	ProtocolVersion       *string  `json:"protocol_version"`
	GrantedCapabilities   []string `json:"granted_capabilities"`
	MaxFileSizeBytes      *int64   `json:"max_file_size_bytes"`
	CommandTimeoutSeconds *float64 `json:"command_timeout_seconds"`
	MaxConcurrent         *int     `json:"max_concurrent"`
}

// ErrorPayload is ERROR's payload.
type ErrorPayload struct {
	Code    string         `json:"code"`
	Message string         `json:"message"`
	Fatal   bool           `json:"fatal"`
	Details map[string]any `json:"details,omitempty"`
}

// AckPayload is ACK's payload.
type AckPayload struct {
	OK bool `json:"ok"`
}

// TypeShellSandbox is hostlink's own message, sent unasked right after a
// HELLO_ACK that grants shell_sandbox: the confinement commands run in
// here, as measured (a sandbox.Status). Upstream's HELLO has no room for
// it.
const TypeShellSandbox = "SHELL_SANDBOX"

// Status is STATUS's payload.
type Status struct {
	InFlight      int     `json:"in_flight"`
	MaxConcurrent int     `json:"max_concurrent"`
	QueueDepth    int     `json:"queue_depth"`
	AuditLogBytes int64   `json:"audit_log_bytes"`
	UptimeSeconds float64 `json:"uptime_seconds"`
}

// SessionRevoked is SESSION_REVOKED's payload.
type SessionRevoked struct {
	Reason           string `json:"reason"`
	NewShimMachineID string `json:"new_shim_machine_id,omitempty"`
}

// Idempotent is embedded in mutating requests: hostlink's addition.
type Idempotent struct {
	IdempotencyKey string `json:"idempotency_key,omitempty"`
}

// FileRead is FILE_READ's payload.
type FileRead struct {
	Path     string `json:"path"`
	Encoding string `json:"encoding"`
	Format   string `json:"format"`
	Offset   int64  `json:"offset"`
	Length   *int64 `json:"length"`
}

// FileContents is FILE_CONTENTS's payload.
type FileContents struct {
	Content   string `json:"content"`
	Encoding  string `json:"encoding"`
	SizeBytes int64  `json:"size_bytes"`
	Truncated bool   `json:"truncated"`
}

// FileWrite is FILE_WRITE's payload.
type FileWrite struct {
	Path          string `json:"path"`
	Content       string `json:"content"`
	Encoding      string `json:"encoding"`
	CreateParents bool   `json:"create_parents"`
	Idempotent
}

// FileStat is FILE_STAT's payload.
type FileStat struct {
	Path           string `json:"path"`
	FollowSymlinks *bool  `json:"follow_symlinks"`
}

// FileStatResponse is FILE_STAT_RESPONSE's payload. For a missing path
// every field but exists and path is null.
type FileStatResponse struct {
	Exists    bool     `json:"exists"`
	IsFile    *bool    `json:"is_file"`
	IsDir     *bool    `json:"is_dir"`
	IsSymlink *bool    `json:"is_symlink"`
	SizeBytes *int64   `json:"size_bytes"`
	Mtime     *float64 `json:"mtime"`
	Ctime     *float64 `json:"ctime"`
	Mode      *string  `json:"mode"`
	OwnerUID  *int     `json:"owner_uid"`
	OwnerGID  *int     `json:"owner_gid"`
	MimeType  *string  `json:"mime_type"`
	Path      string   `json:"path"`
}

// FileList is FILE_LIST's payload.
type FileList struct {
	Path          string  `json:"path"`
	Glob          *string `json:"glob"`
	Recursive     bool    `json:"recursive"`
	IncludeHidden bool    `json:"include_hidden"`
	MaxEntries    *int    `json:"max_entries"`
}

// FileListEntry is one FILE_LIST_RESPONSE entry.
type FileListEntry struct {
	Name      string  `json:"name"`
	Path      string  `json:"path"`
	IsFile    bool    `json:"is_file"`
	IsDir     bool    `json:"is_dir"`
	IsSymlink bool    `json:"is_symlink"`
	SizeBytes int64   `json:"size_bytes"`
	Mtime     float64 `json:"mtime"`
}

// FileListResponse is FILE_LIST_RESPONSE's payload.
type FileListResponse struct {
	Entries   []FileListEntry `json:"entries"`
	Truncated bool            `json:"truncated"`
}

// FileDelete is FILE_DELETE's payload.
type FileDelete struct {
	Path      string `json:"path"`
	Recursive bool   `json:"recursive"`
	MissingOK bool   `json:"missing_ok"`
	Idempotent
}

// FileMove is FILE_MOVE's payload.
type FileMove struct {
	Src       string `json:"src"`
	Dst       string `json:"dst"`
	Overwrite bool   `json:"overwrite"`
	Idempotent
}

// ExecuteCommand is EXECUTE_COMMAND's payload.
type ExecuteCommand struct {
	Command        *string           `json:"command"`
	Argv           []string          `json:"argv"`
	Shell          string            `json:"shell"`
	Cwd            string            `json:"cwd"`
	TimeoutSeconds *float64          `json:"timeout_seconds"`
	Env            map[string]string `json:"env"`
	Idempotent
}

// CommandResult is COMMAND_RESULT's payload. CaptureID (an addition, only
// with the command_output capability) names the stored output, readable in
// chunks with OPERATION_CALL read_command_output.
type CommandResult struct {
	Stdout          string  `json:"stdout"`
	Stderr          string  `json:"stderr"`
	ExitCode        int     `json:"exit_code"`
	TimedOut        bool    `json:"timed_out"`
	DurationSeconds float64 `json:"duration_seconds"`
	OutputTruncated bool    `json:"output_truncated"`
	CaptureID       string  `json:"capture_id,omitempty"`
}

// OperationCall is OPERATION_CALL's payload.
type OperationCall struct {
	Op   string          `json:"op"`
	Args json.RawMessage `json:"args"`
	Idempotent
}

// OperationResult is OPERATION_RESULT's payload.
type OperationResult struct {
	Op     string `json:"op"`
	Result any    `json:"result"`
}
