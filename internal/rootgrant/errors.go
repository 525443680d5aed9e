package rootgrant

import "github.com/hostlink/hostlink/internal/errcode"

// Error codes of the Local PC Executor protocol v1.1 for session roots.
const (
	// GrantInvalid: a root_grant is malformed, has a bad HMAC, is bound to
	// another machine or session, has expired, or its directory's
	// fingerprint changed.
	GrantInvalid errcode.Code = "ROOT_GRANT_INVALID"
	// DirectoryUnavailable: the directory disappeared, became a link or
	// junction, is not a directory, or is no longer accessible.
	DirectoryUnavailable errcode.Code = "DIRECTORY_UNAVAILABLE"
	// SessionNotAttached: activation was asked before a folder was attached.
	SessionNotAttached errcode.Code = "SESSION_NOT_ATTACHED"
	// SessionAlreadyActive: a root replacement was asked while the session's
	// data runtime runs; detach first.
	SessionAlreadyActive errcode.Code = "SESSION_ALREADY_ACTIVE"
	// RevisionMismatch: activation or restore named a stale revision.
	RevisionMismatch errcode.Code = "SESSION_REVISION_MISMATCH"
)

func invalid(format string, args ...any) *errcode.Error {
	return errcode.New(GrantInvalid, format, args...)
}

func unavailable(format string, args ...any) *errcode.Error {
	return errcode.New(DirectoryUnavailable, format, args...)
}
