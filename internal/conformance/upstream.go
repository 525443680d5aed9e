package conformance

// What the upstream protocol defines, written from its docs/PROTOCOL.md
// and message models: the message types, the error codes and, for each
// message an executor sends, the payload fields (upstream's models forbid
// any other) and which of them are required.

// ErrorCodes is upstream's ErrorCode list, the recording preview's codes
// included.
var ErrorCodes = set(
	"PATH_OUTSIDE_ALLOWED_ROOT", "PATH_RESERVED_NAME", "PATH_INVALID_CHARS", "PATH_NOT_FOUND", "PATH_NOT_EMPTY",
	"PATH_EXISTS", "COMMAND_TIMEOUT", "SHELL_NOT_AVAILABLE", "UNSUPPORTED_ARCH", "CAPABILITY_NOT_GRANTED",
	"AUTH_FAILED", "SHIM_OVERLOADED", "INTERNAL_ERROR", "FILE_TOO_LARGE", "DEPENDENCY_MISSING",
	"DIRECTORY_REFERENCE_INVALID", "DIRECTORY_UNAVAILABLE", "ROOT_GRANT_INVALID", "SESSION_NOT_ATTACHED",
	"SESSION_ALREADY_ACTIVE", "SESSION_REVISION_MISMATCH", "WINDOW_STALE", "PERMISSION_PENDING",
	"FEATURE_NOT_SUPPORTED", "CLIPBOARD_CONCEALED", "INPUT_OUT_OF_BOUNDS", "MODEL_NOT_AVAILABLE",
	"LOCAL_LLM_BUSY", "LOCAL_LLM_FAILED", "RECORDING_NOT_FOUND", "RECORDING_CHANNEL_UNAVAILABLE",
	"RECORDING_ALREADY_ACTIVE", "RECORDING_REVIEW_INVALID", "CONSENT_REQUIRED", "INTERPRETATION_UNAVAILABLE",
)

// Replies is, for each request a platform sends, the reply types other
// than ERROR upstream answers it with.
var Replies = map[string][]string{
	"PING":                      {"PONG"},
	"DIRECTORY_LIST_REQUEST":    {"DIRECTORY_LIST_RESPONSE"},
	"ATTACH_SESSION":            {"SESSION_ATTACHED"},
	"ACTIVATE_SESSION":          {"SESSION_ACTIVATED"},
	"RESTORE_SESSION":           {"SESSION_RESTORED"},
	"DETACH_SESSION":            {"ACK"},
	"FILE_READ":                 {"FILE_CONTENTS"},
	"FILE_WRITE":                {"ACK"},
	"FILE_STAT":                 {"FILE_STAT_RESPONSE"},
	"FILE_LIST":                 {"FILE_LIST_RESPONSE"},
	"FILE_DELETE":               {"ACK"},
	"FILE_MOVE":                 {"ACK"},
	"EXECUTE_COMMAND":           {"COMMAND_RESULT"},
	"SCREENSHOT_REQUEST":        {"SCREENSHOT_RESPONSE"},
	"INPUT_ACTION":              {"ACK"},
	"CURSOR_POSITION_REQUEST":   {"CURSOR_POSITION_RESPONSE"},
	"DISPLAY_INFO_REQUEST":      {"DISPLAY_INFO_RESPONSE"},
	"WINDOW_LIST_REQUEST":       {"WINDOW_LIST_RESPONSE"},
	"WINDOW_FOCUS":              {"ACK"},
	"APP_LIST_REQUEST":          {"APP_LIST_RESPONSE"},
	"APP_LAUNCH":                {"ACK"},
	"CLIPBOARD_READ":            {"CLIPBOARD_READ_RESPONSE"},
	"CLIPBOARD_WRITE":           {"ACK"},
	"PERMISSIONS_CHECK_REQUEST": {"PERMISSIONS_CHECK_RESPONSE"},
	"LOCAL_LLM_COMPLETION":      {"LOCAL_LLM_COMPLETION_RESPONSE"},
}

// ComputerTypes are upstream's computer-use requests.
var ComputerTypes = set("SCREENSHOT_REQUEST", "INPUT_ACTION", "CURSOR_POSITION_REQUEST", "DISPLAY_INFO_REQUEST",
	"WINDOW_LIST_REQUEST", "WINDOW_FOCUS", "APP_LIST_REQUEST", "APP_LAUNCH", "CLIPBOARD_READ", "CLIPBOARD_WRITE",
	"PERMISSIONS_CHECK_REQUEST")

// fields are a payload's: name → required.
type fields map[string]bool

// Payloads are the fields of each message an executor sends (nested
// objects under "TYPE.field[]" for list elements, "TYPE.field" for
// objects).
var Payloads = map[string]fields{
	"HELLO": {"shim_version": true, "machine_id": true, "display_name": false, "platform": true, "arch": true,
		"screen_resolution": false, "capabilities": true, "allowed_root": true, "local_llm_models": false,
		"hardware_devices": false, "computer_use_features": false, "computer_use_features_coarse": false,
		"recording_channels": false, "recording_routes": false, "protocol_version": false},
	"PONG":                              {},
	"ACK":                               {"ok": false},
	"ERROR":                             {"code": true, "message": true, "fatal": false, "details": false},
	"STATUS":                            {"in_flight": true, "max_concurrent": true, "queue_depth": false, "audit_log_bytes": false, "uptime_seconds": false},
	"DIRECTORY_LIST_RESPONSE":           {"browse_id": true, "current": false, "parent_ref": false, "entries": true, "next_cursor": false, "truncated": false, "expires_at": true},
	"DIRECTORY_LIST_RESPONSE.entries[]": {"directory_ref": true, "name": true, "path": true},
	"DIRECTORY_LIST_RESPONSE.current":   {"directory_ref": true, "name": true, "path": true},
	"SESSION_ATTACHED":                  {"session_id": true, "allowed_root": true, "fingerprint": true, "revision": true, "root_grant": true},
	"SESSION_ACTIVATED":                 {"session_id": true, "allowed_root": true, "fingerprint": true, "revision": true},
	"SESSION_RESTORED":                  {"session_id": true, "allowed_root": true, "fingerprint": true, "revision": true, "root_grant": true},
	"FILE_CONTENTS":                     {"content": true, "encoding": true, "size_bytes": true, "truncated": false},
	"FILE_STAT_RESPONSE": {"exists": true, "is_file": false, "is_dir": false, "is_symlink": false, "size_bytes": false,
		"mtime": false, "ctime": false, "mode": false, "owner_uid": false, "owner_gid": false, "mime_type": false, "path": false},
	"FILE_LIST_RESPONSE":           {"entries": true, "truncated": false},
	"FILE_LIST_RESPONSE.entries[]": {"name": true, "path": true, "is_file": true, "is_dir": true, "is_symlink": true, "size_bytes": false, "mtime": false},
	"COMMAND_RESULT":               {"stdout": true, "stderr": true, "exit_code": true, "timed_out": true, "duration_seconds": true, "output_truncated": false},

	// Computer use.
	"SCREENSHOT_RESPONSE": {"image_base64": true, "mime_type": false, "width": true, "height": true, "monitor": false,
		"region": false, "display_scale": false, "logical_size": false, "meta": false},
	"SCREENSHOT_RESPONSE.meta": {"origin": false, "display_id": false},
	"CURSOR_POSITION_RESPONSE": {"x": true, "y": true, "monitor": false},
	"DISPLAY_INFO_RESPONSE":    {"monitors": true},
	"DISPLAY_INFO_RESPONSE.monitors[]": {"index": true, "primary": false, "physical_size": true, "logical_size": true,
		"scale": false, "origin": false},
	"WINDOW_LIST_RESPONSE": {"windows": true, "truncated": false},
	"WINDOW_LIST_RESPONSE.windows[]": {"window_id": true, "pid": true, "app_name": false, "app_bundle_id": false, "title": false,
		"bounds": true, "monitor": false, "is_focused": false, "is_minimized": false, "is_fullscreen": false},
	"APP_LIST_RESPONSE":          {"apps": true},
	"APP_LIST_RESPONSE.apps[]":   {"pid": true, "name": true, "bundle_id": false, "executable_path": false, "is_frontmost": false, "window_count": false},
	"CLIPBOARD_READ_RESPONSE":    {"format": false, "content": true, "size_bytes": true},
	"PERMISSIONS_CHECK_RESPONSE": {"permissions": true},
}

func set(s ...string) map[string]bool {
	m := make(map[string]bool, len(s))
	for _, x := range s {
		m[x] = true
	}
	return m
}
