package approvals

import "github.com/hostlink/hostlink/internal/errcode"

// Codes this package adds to internal/errcode's.
const (
	// CodePending: the action waits for the user's approval and has not
	// run; details carry approval_id and expires_at. Send the identical
	// request again to run it once approved.
	CodePending errcode.Code = "APPROVAL_PENDING"
	// CodeDenied: the user denied the action.
	CodeDenied errcode.Code = "APPROVAL_DENIED"
	// CodeExpired: nobody decided before the approval's deadline (or an
	// approval was not used before it).
	CodeExpired errcode.Code = "APPROVAL_EXPIRED"
	// CodeNotFound: no approval has that id.
	CodeNotFound errcode.Code = "APPROVAL_NOT_FOUND"
	// CodeDecided: the approval was already decided, or expired.
	CodeDecided errcode.Code = "APPROVAL_ALREADY_DECIDED"
)
