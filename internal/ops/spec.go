package ops

import (
	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/policy"
)

// Capability is the group an operation belongs to: what a platform must
// grant on the link for OPERATION_CALL to reach it, and what `hostlink
// status` reports ready or not.
type Capability string

// Capabilities.
const (
	Files           Capability = "files"
	Shell           Capability = "shell"
	ComputerUse     Capability = "computer_use"
	Agents          Capability = "agents"
	Companion       Capability = "companion"
	DirectoryBrowse Capability = "directory_browse" // the link's control connection: browsing for a session's folder
	// Local is hostlink's own controls (status, approvals, reload),
	// offered to the local user only and never granted to a platform.
	Local Capability = "local"
)

// Transport sets for Spec.Transports.
var (
	// AllTransports is every transport a caller can use.
	AllTransports = []audit.Transport{audit.MCPStdio, audit.MCPHTTP, audit.IPC, audit.Console, audit.Link, audit.Mesh}
	// LocalUser is the local user's control channel only: what no agent
	// or platform may call (approval decisions, reload).
	LocalUser = []audit.Transport{audit.IPC}
	// Remote are the callers on another machine. Their approvals are
	// their own (bound to the peer), and the link's budgets bind them.
	Remote = []audit.Transport{audit.Link, audit.Mesh}
)

// Spec declares an operation: identity, policy class, transports, limits
// and behaviour flags. Register refuses a spec without a name, a class, a
// description or transports.
type Spec struct {
	Name        string // stable name on every transport, e.g. "read_file"
	Title       string
	Description string
	Capability  Capability
	// Class is the policy class the operation's actions fall in.
	Class policy.Class
	// NoAsk: under ask the call runs without asking, because it only
	// looks at work already approved or lists what exists (a command's
	// status, the workdirs); deny still refuses it.
	NoAsk bool
	// Transports may call the operation; on any other it does not exist
	// (UNKNOWN_OPERATION, and MCP does not list it).
	Transports []audit.Transport
	// Budget, if set, is the shared allowance each call takes.
	Budget *Budget

	ReadOnly    bool // does not change anything on the host
	Destructive bool // may delete or overwrite existing data
	Idempotent  bool // repeating it with the same arguments has no further effect
}

// AgentSafe reports whether an agent may call the operation: whether it
// is offered to MCP clients, the agents' transport, where the policy
// judges every call. Everything else (approvals, grants, reload, stop,
// status: the local user's controls) is the user's alone, so a new
// control is too unless it is offered to agents.
func (s *Spec) AgentSafe() bool { return s.Offered(audit.MCPStdio) || s.Offered(audit.MCPHTTP) }

// Offered reports whether the operation may be called over t.
func (s *Spec) Offered(t audit.Transport) bool {
	for _, x := range s.Transports {
		if x == t {
			return true
		}
	}
	return false
}
