// Package errcode defines hostlink's typed errors: a stable code that every
// transport carries unchanged, and a message that is safe to show a caller.
//
// The codes follow the Local PC Executor wire protocol v1.1 where it has one;
// hostlink adds its own only where the protocol has none.
package errcode

import (
	"context"
	"errors"
	"fmt"
)

// Code is a stable, transport-independent error code.
type Code string

// Codes from the Local PC Executor wire protocol v1.1.
const (
	PathOutsideRoot      Code = "PATH_OUTSIDE_ALLOWED_ROOT"
	PathReservedName     Code = "PATH_RESERVED_NAME"
	PathInvalidChars     Code = "PATH_INVALID_CHARS"
	PathNotFound         Code = "PATH_NOT_FOUND"
	PathNotEmpty         Code = "PATH_NOT_EMPTY"
	PathExists           Code = "PATH_EXISTS"
	FileTooLarge         Code = "FILE_TOO_LARGE"
	UnsupportedArch      Code = "UNSUPPORTED_ARCH"
	CapabilityNotGranted Code = "CAPABILITY_NOT_GRANTED"
	AuthFailed           Code = "AUTH_FAILED"
	Overloaded           Code = "SHIM_OVERLOADED"
	Internal             Code = "INTERNAL_ERROR"
	DependencyMissing    Code = "DEPENDENCY_MISSING"

	// The rest of the protocol's list. Each is raised by the package that
	// owns the condition (browse, rootgrant, desktop, procs, link), under
	// the same string.
	CommandTimeout            Code = "COMMAND_TIMEOUT"
	ShellNotAvailable         Code = "SHELL_NOT_AVAILABLE"
	DirectoryReferenceInvalid Code = "DIRECTORY_REFERENCE_INVALID"
	DirectoryUnavailable      Code = "DIRECTORY_UNAVAILABLE"
	RootGrantInvalid          Code = "ROOT_GRANT_INVALID"
	SessionNotAttached        Code = "SESSION_NOT_ATTACHED"
	SessionAlreadyActive      Code = "SESSION_ALREADY_ACTIVE"
	SessionRevisionMismatch   Code = "SESSION_REVISION_MISMATCH"
	WindowStale               Code = "WINDOW_STALE"
	PermissionPending         Code = "PERMISSION_PENDING"
	FeatureNotSupported       Code = "FEATURE_NOT_SUPPORTED"
	ClipboardConcealed        Code = "CLIPBOARD_CONCEALED"
	InputOutOfBounds          Code = "INPUT_OUT_OF_BOUNDS"
	ModelNotAvailable         Code = "MODEL_NOT_AVAILABLE"
	LocalLLMBusy              Code = "LOCAL_LLM_BUSY"
	LocalLLMFailed            Code = "LOCAL_LLM_FAILED"
)

// Wire is every error code of the Local PC Executor protocol v1.1, in the
// order the protocol lists them.
var Wire = []Code{
	PathOutsideRoot, PathReservedName, PathInvalidChars, PathNotFound, PathNotEmpty, PathExists,
	CommandTimeout, ShellNotAvailable, UnsupportedArch, CapabilityNotGranted, AuthFailed, Overloaded,
	Internal, FileTooLarge, DependencyMissing, DirectoryReferenceInvalid, DirectoryUnavailable,
	RootGrantInvalid, SessionNotAttached, SessionAlreadyActive, SessionRevisionMismatch, WindowStale,
	PermissionPending, FeatureNotSupported, ClipboardConcealed, InputOutOfBounds, ModelNotAvailable,
	LocalLLMBusy, LocalLLMFailed,
}

// Codes hostlink adds where the wire protocol has none.
const (
	// ReadOnly: a mutation was asked of a read-only workdir.
	ReadOnly Code = "READ_ONLY"
	// Conflict: the target changed (revision mismatch) or an edit's search
	// text is missing or ambiguous.
	Conflict Code = "CONFLICT"
	// InvalidArgument: the request does not match the operation's schema or
	// asks for something the operation cannot mean.
	InvalidArgument Code = "INVALID_ARGUMENT"
	// UnknownOperation: no operation of that name is registered.
	UnknownOperation Code = "UNKNOWN_OPERATION"
	// CapabilityDisabled: the operation belongs to a capability the
	// local user has not enabled on this computer (commands, the desktop,
	// agents); the message names the flag or config key that enables it
	// and details.capability the capability.
	CapabilityDisabled Code = "CAPABILITY_DISABLED"
	// NotAFile / NotADirectory: the path exists but is of the wrong kind.
	NotAFile      Code = "NOT_A_FILE"
	NotADirectory Code = "NOT_A_DIRECTORY"
	// UnknownWorkdir: the request names a workdir alias that is not configured.
	UnknownWorkdir Code = "UNKNOWN_WORKDIR"
	// Cancelled: the caller cancelled the operation before it finished.
	Cancelled Code = "CANCELLED"
	// AuditUnavailable: the audit record could not be written, so the
	// operation was refused (or its result withheld).
	AuditUnavailable Code = "AUDIT_UNAVAILABLE"
	// CursorExpired: a listing's cursor (list_directory, find_files) is
	// unknown, expired, already used or another client's; listing again
	// from the start gets a new one.
	CursorExpired Code = "CURSOR_EXPIRED"
	// InputNotGranted: the desktop is shared for observation, but the
	// person at the screen did not allow input (keyboard and pointer) in
	// the desktop's consent dialog; acts are refused until a new session
	// is granted with input.
	InputNotGranted Code = "INPUT_NOT_GRANTED"
	// UserOnly: the operation is the local user's alone (it decides,
	// configures or escalates), and the caller acts for an agent: a
	// process hostlink started, or one of its descendants.
	UserOnly Code = "USER_ONLY"
)

// Error is a typed error with a stable code. Message must never contain
// secrets or absolute paths outside the configured roots.
type Error struct {
	Code    Code           `json:"code"`
	Message string         `json:"message"`
	Details map[string]any `json:"details,omitempty"`
	// cause is the error this one stands for, kept for errors.Is/As and
	// the daemon's log; it never reaches a caller or the audit record
	// (it is not marshalled, and Error does not print it).
	cause error
}

func (e *Error) Error() string { return string(e.Code) + ": " + e.Message }

// Unwrap returns the error e stands for, if any.
func (e *Error) Unwrap() error { return e.cause }

// Wrap returns e with cause as the error it stands for.
func (e *Error) Wrap(cause error) *Error {
	c := *e
	c.cause = cause
	return &c
}

// New returns an *Error with a formatted message.
func New(code Code, format string, args ...any) *Error {
	return &Error{Code: code, Message: fmt.Sprintf(format, args...)}
}

// With returns a copy of e with a detail added.
func (e *Error) With(key string, value any) *Error {
	c := *e
	c.Details = make(map[string]any, len(e.Details)+1)
	for k, v := range e.Details {
		c.Details[k] = v
	}
	c.Details[key] = value
	return &c
}

// As converts any error into an *Error. Errors that are not typed become
// INTERNAL_ERROR with a generic message, so that an unexpected error's text
// (which may name paths or values) never reaches a caller; context
// cancellation becomes CANCELLED.
func As(err error) *Error {
	if err == nil {
		return nil
	}
	var e *Error
	if errors.As(err, &e) {
		return e
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return New(Cancelled, "the operation was cancelled").Wrap(err)
	}
	return New(Internal, "internal error").Wrap(err)
}

// CodeOf returns the code of err, or "" for nil.
func CodeOf(err error) Code {
	if err == nil {
		return ""
	}
	return As(err).Code
}
