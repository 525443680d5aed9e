package approvals

import "github.com/hostlink/hostlink/internal/approvalsapi"

// The broker's records are approvalsapi's types, named here too as os
// names io/fs's FileInfo: the broker makes and decides them, while the
// CLI and other readers of the control channel need only the types.
type (
	State       = approvalsapi.State
	Field       = approvalsapi.Field
	Action      = approvalsapi.Action
	Target      = approvalsapi.Target
	Image       = approvalsapi.Image
	Mark        = approvalsapi.Mark
	Approval    = approvalsapi.Approval
	Scope       = approvalsapi.Scope
	Grant       = approvalsapi.Grant
	Proposal    = approvalsapi.Proposal
	BatchResult = approvalsapi.BatchResult
)

// The states and scopes, as approvalsapi defines them.
const (
	Pending         = approvalsapi.Pending
	Approved        = approvalsapi.Approved
	Denied          = approvalsapi.Denied
	Expired         = approvalsapi.Expired
	Used            = approvalsapi.Used
	Abandoned       = approvalsapi.Abandoned
	Stale           = approvalsapi.Stale
	ScopeOnce       = approvalsapi.ScopeOnce
	ScopeSession    = approvalsapi.ScopeSession
	ScopeClass      = approvalsapi.ScopeClass
	ScopePath       = approvalsapi.ScopePath
	ScopeCommand    = approvalsapi.ScopeCommand
	ScopeArgvPrefix = approvalsapi.ScopeArgvPrefix
)
