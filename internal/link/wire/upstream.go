package wire

import "github.com/hostlink/hostlink/internal/errcode"

// UpstreamCode is the one table from every error code hostlink can
// produce to the code of the upstream protocol's list (errcode.Wire) a
// platform that did not grant hostlink's vocabulary (capability
// "hostlink_errors") is sent instead; the precise code then travels in
// details.hostlink_code. The protocol's own codes map to themselves and
// are not listed. A code missing here (a new one) falls back to
// INTERNAL_ERROR, and the link's tests fail until it has a row.
//
// The choice for each: what an upstream platform should do on it. Pending
// approvals are PERMISSION_PENDING, whose meaning upstream is "not yet
// permitted on this machine; retry on the next turn"; refusals by the
// local user or policy are CAPABILITY_NOT_GRANTED (the machine does not
// grant this); transient capacity is SHIM_OVERLOADED (the platform may
// back off and retry); everything a retry would not fix is INTERNAL_ERROR,
// upstream's catch-all.
var UpstreamCode = map[errcode.Code]errcode.Code{
	// Approvals and policy (internal/approvals, internal/policy).
	"APPROVAL_PENDING":         errcode.PermissionPending,
	"APPROVAL_EXPIRED":         errcode.PermissionPending, // sending again asks anew
	"APPROVAL_DENIED":          errcode.CapabilityNotGranted,
	"POLICY_DENIED":            errcode.CapabilityNotGranted,
	"READ_ONLY":                errcode.CapabilityNotGranted,
	"AGENT_NOT_ALLOWED":        errcode.CapabilityNotGranted,
	"APPROVAL_NOT_FOUND":       errcode.Internal,
	"CLASS_NOT_OFFERED":        errcode.CapabilityNotGranted, // the mesh's classes; never on the link
	"APPROVAL_ALREADY_DECIDED": errcode.Internal,
	// Grants are the local user's (the control channel's), never the link's.
	"APPROVAL_BAD_SCOPE": errcode.Internal,
	"GRANT_NOT_FOUND":    errcode.Internal,
	"GRANT_NOT_SAVEABLE": errcode.Internal,

	// Requests and frames (internal/errcode, this package).
	"INVALID_ARGUMENT":    errcode.Internal,
	"INVALID_MESSAGE":     errcode.Internal,
	"FRAME_TOO_LARGE":     errcode.FileTooLarge,
	"UNKNOWN_OPERATION":   errcode.FeatureNotSupported,
	"CAPABILITY_DISABLED": errcode.FeatureNotSupported, // turned off on this machine, as UNKNOWN_OPERATION was
	// The daemon's own start and its front end's; never on the link.
	"LISTEN_ADDRESS_IN_USE":       errcode.Internal,
	"DAEMON_NOT_RUNNING":          errcode.Internal,
	"DAEMON_START_FAILED":         errcode.Internal,
	"NO_INSTANCE":                 errcode.Internal, // hostlink token, on the command line
	"EXECUTABLE_IS_TEMPORARY":     errcode.Internal, // hostlink install, on the command line
	"UNKNOWN_WORKDIR":             errcode.PathOutsideRoot,
	"CONFLICT":                    errcode.Internal,
	"CANCELLED":                   errcode.Internal,
	"AUDIT_UNAVAILABLE":           errcode.Internal,
	"IDEMPOTENCY_KEY_REUSED":      errcode.Internal,
	"IDEMPOTENCY_OUTCOME_UNKNOWN": errcode.Internal,

	// The mesh (internal/mesh); never on the link, whose calls are not
	// the mesh's.
	"EXECUTOR_OFFLINE":       errcode.Internal,
	"UNKNOWN_MACHINE":        errcode.Internal,
	"MESH_ASSERTION_INVALID": errcode.AuthFailed,
	"MESH_CALLER_UNKNOWN":    errcode.AuthFailed,
	"CLOCK_SKEW":             errcode.AuthFailed,
	"MESH_REPLAY":            errcode.AuthFailed,
	"PAYLOAD_TOO_LARGE":      errcode.FileTooLarge,
	"MESH_TIMEOUT":           errcode.Internal,
	"MESH_BUSY":              errcode.Overloaded,
	"MESH_SLOW_CONSUMER":     errcode.Overloaded,
	"MESH_UNAVAILABLE":       errcode.Internal,
	"PAIRING_INVALID":        errcode.AuthFailed,

	// Files (internal/jail, internal/errcode).
	"NOT_A_FILE": errcode.Internal,
	// The jail keeps to the root's own objects: a file with other names
	// (which may lie outside) and another mounted file system are outside.
	"HARDLINK_REFUSED":  errcode.PathOutsideRoot,
	"MOUNT_CROSSING":    errcode.PathOutsideRoot,
	"NOT_A_DIRECTORY":   errcode.Internal,
	"CURSOR_EXPIRED":    errcode.Internal,         // list again from the start
	"PATH_TOO_LONG":     errcode.PathInvalidChars, // the path is not one this OS can name
	"PERMISSION_DENIED": errcode.Internal,
	"IMAGE_TOO_LARGE":   errcode.FileTooLarge,

	// Commands (internal/procs, internal/sandbox, internal/capture, internal/lease).
	"COMMAND_START_FAILED":      errcode.ShellNotAvailable,
	"SANDBOX_FAILED":            errcode.Internal,
	"CAPTURE_NOT_FOUND":         errcode.Internal,
	"CAPTURE_UNAVAILABLE":       errcode.Internal,
	"WORKDIR_BUSY":              errcode.Overloaded,
	"WORKDIR_RECOVERY_REQUIRED": errcode.Internal,

	// Computer use (internal/desktop, internal/companion, the link).
	"DESKTOP_UNAVAILABLE":                 errcode.FeatureNotSupported,
	"DESKTOP_DRIFT":                       errcode.Internal,
	"OBSERVATION_UNKNOWN":                 errcode.Internal,
	"OBSERVATION_EXPIRED":                 errcode.Internal,
	"OBSERVATION_CONSUMED":                errcode.Internal,
	"KEY_UNMAPPED":                        errcode.FeatureNotSupported,
	"INPUT_FAILED":                        errcode.Internal,
	"INPUT_NOT_GRANTED":                   errcode.CapabilityNotGranted, // the person shared the screen without input
	"APP_NOT_FOUND":                       errcode.FeatureNotSupported,
	"WINDOW_NOT_VISIBLE":                  errcode.WindowStale,
	"COMPANION_NOT_PAIRED":                errcode.DependencyMissing,
	"COMPANION_UNAVAILABLE":               errcode.DependencyMissing,
	"COMPANION_TRANSFER_FAILED":           errcode.Internal,
	"computer_companion_upgrade_required": errcode.DependencyMissing,

	// Agent tasks (internal/agent).
	"TASK_NOT_FOUND":              errcode.Internal,
	"INVALID_STATE":               errcode.Internal,
	"IDEMPOTENCY_CONFLICT":        errcode.Internal,
	"RUNTIME_UNAVAILABLE":         errcode.DependencyMissing,
	"RUNTIME_NOT_READY":           errcode.DependencyMissing, // not installed or not signed in
	"RUNTIME_TIMEOUT":             errcode.Internal,          // a limit in the local config, not the platform's to fix
	"REQUEST_NOT_FOUND":           errcode.Internal,
	"REQUEST_EXPIRED":             errcode.Internal,
	"REQUEST_ALREADY_RESOLVED":    errcode.Internal,
	"DECISION_NOT_OFFERED":        errcode.Internal,
	"TASK_OWNED_BY_OTHER_PROCESS": errcode.Internal,
	"RESULT_UNAVAILABLE":          errcode.Internal,
	"TOO_MANY_TASKS":              errcode.Overloaded,

	// The local IPC channel's (internal/ipc): never on the link, listed so
	// that the table covers every code.
	"PROTOCOL_ERROR":               errcode.Internal,
	"UNSUPPORTED_PROTOCOL_VERSION": errcode.Internal,
	"PEER_REFUSED":                 errcode.Internal,
	// The local user's controls (the control channel, the console): never
	// on the link, whose callers are never the user.
	"USER_ONLY":                 errcode.Internal,
	"CONSOLE_UNAVAILABLE":       errcode.Internal,
	"PERSON_REQUIRED":           errcode.Internal,
	"APPROVAL_PROPOSAL_CHANGED": errcode.Internal,
}

// upstreamCodes is errcode.Wire as a set.
var upstreamCodes = func() map[errcode.Code]bool {
	m := make(map[errcode.Code]bool, len(errcode.Wire))
	for _, c := range errcode.Wire {
		m[c] = true
	}
	return m
}()

// IsUpstream reports whether code is in the upstream protocol's list.
func IsUpstream(code errcode.Code) bool { return upstreamCodes[code] }

// ForUpstream returns e as a platform that speaks only the upstream
// vocabulary is sent it: an upstream code unchanged, any other replaced
// by its UpstreamCode row with the precise code in details.hostlink_code
// (other details, such as a pending approval's approval_id and
// expires_at, are kept).
func ForUpstream(e *errcode.Error) *errcode.Error {
	if upstreamCodes[e.Code] {
		return e
	}
	to, ok := UpstreamCode[e.Code]
	if !ok {
		to = errcode.Internal
	}
	m := e.With("hostlink_code", string(e.Code))
	m.Code = to
	return m
}
