package link

import "github.com/hostlink/hostlink/internal/errcode"

// Wire error codes of protocol v1.1 that errcode does not already define.
// Values are the protocol's; packages that raise the same condition use the
// same string, so a code is one code whatever package produced it.
const (
	CodeShellNotAvailable         errcode.Code = "SHELL_NOT_AVAILABLE"
	CodeCommandTimeout            errcode.Code = "COMMAND_TIMEOUT"
	CodeDirectoryReferenceInvalid errcode.Code = "DIRECTORY_REFERENCE_INVALID"
	CodeDirectoryUnavailable      errcode.Code = "DIRECTORY_UNAVAILABLE"
	CodeRootGrantInvalid          errcode.Code = "ROOT_GRANT_INVALID"
	CodeSessionNotAttached        errcode.Code = "SESSION_NOT_ATTACHED"
	CodeSessionAlreadyActive      errcode.Code = "SESSION_ALREADY_ACTIVE"
	CodeSessionRevisionMismatch   errcode.Code = "SESSION_REVISION_MISMATCH"
	CodeWindowStale               errcode.Code = "WINDOW_STALE"
	CodePermissionPending         errcode.Code = "PERMISSION_PENDING"
	CodeFeatureNotSupported       errcode.Code = "FEATURE_NOT_SUPPORTED"
	CodeClipboardConcealed        errcode.Code = "CLIPBOARD_CONCEALED"
	CodeInputOutOfBounds          errcode.Code = "INPUT_OUT_OF_BOUNDS"
	CodeModelNotAvailable         errcode.Code = "MODEL_NOT_AVAILABLE"
	CodeLocalLLMBusy              errcode.Code = "LOCAL_LLM_BUSY"
	CodeLocalLLMFailed            errcode.Code = "LOCAL_LLM_FAILED"
)

// Codes hostlink adds to the wire, for its own additions.
const (
	// CodeFrameTooLarge: a frame exceeded MaxFrameBytes; it was discarded
	// and the connection kept.
	CodeFrameTooLarge errcode.Code = "FRAME_TOO_LARGE"
	// CodeInvalidMessage: a frame is not a valid envelope, or its payload
	// does not decode as its type's.
	CodeInvalidMessage errcode.Code = "INVALID_MESSAGE"
	// CodeIdempotencyKeyReused: an idempotency key was sent again with a
	// different request.
	CodeIdempotencyKeyReused errcode.Code = "IDEMPOTENCY_KEY_REUSED"
	// CodeOutcomeUnknown: a request with this idempotency key was started
	// by a hostlink that stopped before recording its result; it may or may
	// not have taken effect, and is not run again.
	CodeOutcomeUnknown errcode.Code = "IDEMPOTENCY_OUTCOME_UNKNOWN"
)

// WireCodes is every error code of protocol v1.1, in the order the
// protocol lists them.
var WireCodes = []errcode.Code{
	errcode.PathOutsideRoot, errcode.PathReservedName, errcode.PathInvalidChars,
	errcode.PathNotFound, errcode.PathNotEmpty, errcode.PathExists,
	CodeCommandTimeout, CodeShellNotAvailable, errcode.UnsupportedArch,
	errcode.CapabilityNotGranted, errcode.AuthFailed, errcode.Overloaded,
	errcode.Internal, errcode.FileTooLarge, errcode.DependencyMissing,
	CodeDirectoryReferenceInvalid, CodeDirectoryUnavailable, CodeRootGrantInvalid,
	CodeSessionNotAttached, CodeSessionAlreadyActive, CodeSessionRevisionMismatch,
	CodeWindowStale, CodePermissionPending, CodeFeatureNotSupported,
	CodeClipboardConcealed, CodeInputOutOfBounds, CodeModelNotAvailable,
	CodeLocalLLMBusy, CodeLocalLLMFailed,
}
