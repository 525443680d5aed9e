// Package apitype holds the control channel's request and response types:
// what the running daemon answers to `hostlink status`, `hostlink
// approvals` and `hostlink reload`, and what internal/doctor reads. It is a
// leaf, so that the CLI and doctor read the daemon's answers without
// importing the daemon.
package apitype

import (
	"time"

	"github.com/hostlink/hostlink/internal/auditapi"
	"github.com/hostlink/hostlink/internal/sandboxapi"
	"github.com/hostlink/hostlink/internal/version"
)

// The control channel's own methods, beside the registry's operations:
// local-user operations that only the control channel offers (see
// ops.LocalUser).
const (
	MethodStatus          = "status"
	MethodApprovalsList   = "approvals.list"
	MethodApprovalsShow   = "approvals.show"
	MethodApprovalsDecide = "approvals.decide"
	MethodApprovalsBatch  = "approvals.decide_batch"
	MethodGrantsList      = "approvals.grants"
	MethodGrantsRevoke    = "approvals.revoke"
	MethodGrantsSave      = "approvals.save"
	MethodReload          = "reload"
	MethodStop            = "stop"
	MethodConsoleLogin    = "console.login"
)

// ConsoleLogin is a one-time login link to the web console, for the local
// user who asked (`hostlink console`).
type ConsoleLogin struct {
	// URL works once, until ExpiresAt. Empty when Opened: under
	// [policy] confirm_in_person the daemon opens it in the browser
	// itself and hands it to nobody.
	URL       string    `json:"url,omitempty"`
	ExpiresAt time.Time `json:"expires_at"`
	Opened    bool      `json:"opened,omitempty"`
}

// Status is a snapshot of the running daemon, as `hostlink status` shows it.
type Status struct {
	Version       string             `json:"version"`
	Build         version.Info       `json:"build"` // the daemon binary's version, commit, date, Go and target
	PID           int                `json:"pid"`
	Started       time.Time          `json:"started"`
	UptimeSeconds int64              `json:"uptime_seconds"`
	Transports    []TransportStatus  `json:"transports"`
	Link          LinkStatus         `json:"link"`
	Capabilities  []CapabilityStatus `json:"capabilities"`
	// Sandbox is the confinement commands get, as measured; set while
	// commands are enabled.
	Sandbox  *sandboxapi.Status `json:"sandbox,omitempty"`
	Workdirs []WorkdirStatus    `json:"workdirs"`
	Commands []CommandStatus    `json:"commands"` // running commands
	Tasks    []TaskStatus       `json:"tasks"`    // running agent tasks
	// Companion is the runtime side of the companion route, when
	// [companion] listen or wsl_helper is set.
	Companion *CompanionStatus `json:"companion,omitempty"`
	// Update is the update check's last result, while [update] check is
	// on (internal/update.Checker).
	Update *UpdateStatus `json:"update,omitempty"`
}

// UpdateStatus is what the update check found.
type UpdateStatus struct {
	URL       string     `json:"url"`                  // where it looks for the latest release
	Current   string     `json:"current"`              // this daemon's version
	Latest    string     `json:"latest,omitempty"`     // the latest release, once a check succeeded
	Available bool       `json:"available"`            // Latest is newer than Current
	CheckedAt *time.Time `json:"checked_at,omitempty"` // the last check, successful or not
	Error     string     `json:"error,omitempty"`      // why the last check failed
	// Command is how to update this installation: "hostlink update", or
	// the package manager's command.
	Command string `json:"command,omitempty"`
}

// TransportStatus is one endpoint the daemon serves.
type TransportStatus struct {
	Name    auditapi.Transport `json:"name"`    // "mcp-http", "ipc", "console"
	Address string             `json:"address"` // URL, socket path or pipe name
}

// LinkStatus is the state of the link to the platform.
type LinkStatus struct {
	State  string      `json:"state"` // "not_configured", "connecting", "connected", "backoff", "stopped"
	Reason string      `json:"reason,omitempty"`
	Detail *LinkDetail `json:"detail,omitempty"`
}

// LinkDetail is the link's connections and sessions.
type LinkDetail struct {
	URL      string          `json:"url"`
	Control  *LinkConnection `json:"control,omitempty"`
	Legacy   *LinkConnection `json:"legacy_session,omitempty"`
	Sessions []LinkSession   `json:"sessions"`
}

// LinkConnection is one of the link's connections.
type LinkConnection struct {
	SessionID    string `json:"session_id,omitempty"`
	URL          string `json:"url"`
	State        string `json:"state"` // connecting, connected, backoff, stopped
	ConnectionID string `json:"connection_id,omitempty"`
	Version      string `json:"protocol_version,omitempty"`
	Connects     int    `json:"connects"`
	InFlight     int    `json:"in_flight"`
	LastError    string `json:"last_error,omitempty"`
}

// LinkSession is one attached platform session.
type LinkSession struct {
	SessionID   string          `json:"session_id"`
	AllowedRoot string          `json:"allowed_root"`
	Revision    int64           `json:"revision"`
	Active      bool            `json:"active"`
	Connection  *LinkConnection `json:"connection,omitempty"`
}

// CapabilityStatus says whether a capability is ready and, if not, why and
// how to enable it.
type CapabilityStatus struct {
	Name   string `json:"name"`
	Ready  bool   `json:"ready"`
	Reason string `json:"reason,omitempty"`
}

// WorkdirStatus is one configured workdir.
type WorkdirStatus struct {
	Alias    string `json:"alias"`
	Path     string `json:"path"`
	ReadOnly bool   `json:"read_only"`
}

// CommandStatus is a running command.
type CommandStatus struct {
	ID      string    `json:"id"` // capture id
	Command string    `json:"command"`
	Pid     int       `json:"pid"`
	Started time.Time `json:"started"`
}

// TaskStatus is a running agent task.
type TaskStatus struct {
	ID      string    `json:"id"`
	Title   string    `json:"title"`
	Started time.Time `json:"started"`
}

// CompanionStatus is who reaches this hostlink as its companion.
type CompanionStatus struct {
	Listen    string                `json:"listen,omitempty"`
	Connected []CompanionConnection `json:"connected"`
	Helper    *CompanionHelper      `json:"helper,omitempty"`
}

// CompanionConnection is a connected companion.
type CompanionConnection struct {
	ID           string   `json:"id"`
	Name         string   `json:"name"`
	Version      int      `json:"version"`
	OS           string   `json:"os"`
	Route        string   `json:"route"`
	Capabilities []string `json:"capabilities"`
	Desktops     []string `json:"desktops"`
	Connected    string   `json:"connected_at"`
}

// CompanionHelper is the companion this hostlink starts over WSL interop.
type CompanionHelper struct {
	Program   string `json:"program"`
	Starts    int    `json:"starts"`
	Connected bool   `json:"connected"`
	LastError string `json:"last_error,omitempty"`
	LastExit  string `json:"last_exit,omitempty"`
}

// StatusArgs is status's (empty) request.
type StatusArgs struct{}

// ApprovalsListArgs is approvals.list's request.
type ApprovalsListArgs struct {
	All bool `json:"all,omitempty" jsonschema:"also decided and expired ones"`
}

// ApprovalArgs names an approval: approvals.show's request.
type ApprovalArgs struct {
	ID string `json:"id"`
}

// DecideArgs is approvals.decide's request.
type DecideArgs struct {
	ID       string `json:"id"`
	Decision string `json:"decision" enum:"approve,deny"`
	DecideScope
}

// DecideScope is how far an approval reaches (approvals.Decision).
type DecideScope struct {
	Scope      string   `json:"scope,omitempty" enum:"once,session,class,path,command,argv_prefix" jsonschema:"how far an approval reaches; default once"`
	Minutes    int      `json:"minutes,omitempty" min:"0" max:"1440" jsonschema:"scope class: the window in minutes (1 to 1440)"`
	Path       string   `json:"path,omitempty" jsonschema:"scope path: the workdir-relative directory whose contents (not itself) the grant covers; default the one holding the target; never the workdir root"`
	ArgvPrefix []string `json:"argv_prefix,omitempty" jsonschema:"scope argv_prefix: a prefix of the action's argv; default all of it"`
}

// DecideBatchArgs is approvals.decide_batch's request: one decision for
// several approvals.
type DecideBatchArgs struct {
	IDs      []string `json:"ids"`
	Decision string   `json:"decision" enum:"approve,deny"`
	DecideScope
}

// GrantsArgs is approvals.grants' (empty) request.
type GrantsArgs struct{}

// GrantArgs names a grant: approvals.revoke's request.
type GrantArgs struct {
	ID string `json:"id"`
}

// SaveGrantArgs is approvals.save's request: without apply it only shows
// the TOML that saving would write.
type SaveGrantArgs struct {
	ID    string `json:"id"`
	Apply bool   `json:"apply,omitempty" jsonschema:"write it and reload; otherwise only show it"`
}

// SaveGrantResult is what saving a grant writes, or would write.
type SaveGrantResult struct {
	Config  string `json:"config"`  // the configuration file
	Table   string `json:"table"`   // the TOML table it goes in, e.g. policy.workdirs.proj
	TOML    string `json:"toml"`    // the exact lines written
	Applied bool   `json:"applied"` // written and reloaded
	// Reload is the reload's result, when applied.
	Reload *ReloadResult `json:"reload,omitempty"`
}

// ReloadArgs is reload's (empty) request.
type ReloadArgs struct{}

// ReloadResult is what `hostlink reload` reports.
type ReloadResult struct {
	Config string         `json:"config"`
	Policy map[string]any `json:"policy"`
	// RestartNeeded are the keys outside [policy] that differ from the
	// configuration the daemon started with ("server.listen"): a reload
	// applies only [policy], so they take effect at the next start.
	RestartNeeded []string `json:"restart_needed,omitempty"`
}

// StopArgs is stop's (empty) request.
type StopArgs struct{}

// StopResult is what `hostlink stop` reports: the daemon that is stopping.
type StopResult struct {
	PID int `json:"pid"`
}

// ConsoleLoginArgs is console.login's (empty) request.
type ConsoleLoginArgs struct{}
