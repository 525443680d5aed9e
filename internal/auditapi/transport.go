// Package auditapi names what carried a call, as the audit log records it:
// types only, importing nothing beyond the standard library, so that the
// API types packages (apitype and the *api packages) can name a transport
// without linking the audit log.
package auditapi

// Transport names what carried a call or an event, as the audit log
// records it. These are every transport hostlink has; a record's
// transport is always one of them.
type Transport string

// Transports.
const (
	MCPStdio  Transport = "mcp-stdio" // MCP on standard input and output (hostlink mcp)
	MCPHTTP   Transport = "mcp-http"  // MCP over Streamable HTTP on loopback
	IPC       Transport = "ipc"       // the local control channel: the CLI and local tools
	Console   Transport = "console"   // the web console
	Link      Transport = "link"      // the outbound platform link
	Mesh      Transport = "mesh"      // callers on the NATS mesh (package mesh), each verified by its signed assertion
	Companion Transport = "companion" // a companion serving its runtime, recorded on its host
	// WSLInterop is a companion started by its runtime over WSL interop
	// ([companion] wsl_helper), recorded on its host.
	WSLInterop Transport = "wsl_interop"
	// Notification is a desktop notification's buttons, where a user
	// decides an approval.
	Notification Transport = "notification"
	Internal     Transport = "internal" // hostlink itself: start, stop, reloads, expiries
)

// Target is what a call acts on, as its audit record names it.
type Target struct {
	Workdir string   // the workdir's alias
	Paths   []string // root-relative, '/'-separated; a refused one as attempted
	// Outside: a path lay outside its workdir, and was refused.
	Outside bool
}
