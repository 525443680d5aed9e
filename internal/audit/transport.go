package audit

import "github.com/hostlink/hostlink/internal/auditapi"

// Transport names what carried a call or an event (auditapi.Transport,
// declared in that leaf so that the API types need not import the log).
type Transport = auditapi.Transport

// Transports: see auditapi.
const (
	MCPStdio     = auditapi.MCPStdio
	MCPHTTP      = auditapi.MCPHTTP
	IPC          = auditapi.IPC
	Console      = auditapi.Console
	Link         = auditapi.Link
	Mesh         = auditapi.Mesh
	Companion    = auditapi.Companion
	WSLInterop   = auditapi.WSLInterop
	Notification = auditapi.Notification
	Internal     = auditapi.Internal
)
