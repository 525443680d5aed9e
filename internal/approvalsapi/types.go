package approvalsapi

import (
	"time"

	"github.com/hostlink/hostlink/internal/auditapi"
	"github.com/hostlink/hostlink/internal/errcode"
)

// State is where an approval is in its life.
type State string

// States. Pending is the only one a user can decide; an approved approval
// becomes used when the one call it covers runs. A pending approval whose
// every waiting caller cancelled or disconnected is abandoned: nobody is
// there to run it, so it cannot be approved any more, and a resend asks
// anew. A pending or approved approval whose action's targets were found
// changed from what it showed (Action.StateSHA256) is stale: it can be
// neither decided nor used. The resend that finds a pending one stale is
// asked about anew at once; one that finds an approved one stale fails
// CONFLICT (the user approved something else), and the next resend asks.
const (
	Pending   State = "pending"
	Approved  State = "approved"
	Denied    State = "denied"
	Expired   State = "expired"
	Used      State = "used"
	Abandoned State = "abandoned"
	Stale     State = "stale"
)

// Field is one labelled part of an action, as the user is shown it.
type Field struct {
	Label string `json:"label"`
	Value string `json:"value"`
}

// Action is the exact action an approval covers.
type Action struct {
	Op          string             `json:"op"`
	Class       string             `json:"class"` // the policy key that asked, e.g. "commands"
	Transport   auditapi.Transport `json:"transport"`
	Peer        string             `json:"peer,omitempty"`
	Workdir     string             `json:"workdir,omitempty"`      // alias
	WorkdirPath string             `json:"workdir_path,omitempty"` // canonical directory
	Summary     string             `json:"summary"`                // one line, safe for the audit log
	Fields      []Field            `json:"fields"`
	// Session is the client session that asked (see ops.Caller.Session):
	// a key the daemon made for the connection, never a name the client
	// chose. "" for callers without one.
	Session string `json:"session,omitempty"`
	// Targets are the workdir locations the action acts on, as resolved
	// by the jail; grants match on them.
	Targets []Target `json:"targets,omitempty"`
	// CommandLine and Argv are a command's line (as allow_commands
	// matches it) and, for an argv request, its argv; HasEnv says it sets
	// environment variables, which no command grant covers.
	CommandLine string   `json:"command_line,omitempty"`
	Argv        []string `json:"argv,omitempty"`
	HasEnv      bool     `json:"has_env,omitempty"`
	// Diff is the change a file action makes, as a unified diff of the
	// current content and exactly what will be written ("" when there is
	// no text change to show; Fields then say what changes).
	Diff string `json:"diff,omitempty"`
	// Image describes the observation a computer_act refers to, with what
	// the act does marked on it; the marked PNG is Broker.Image(id).
	Image *Image `json:"image,omitempty"`
	// PNG is the marked observation image (not in the JSON: fetch it with
	// Broker.Image).
	PNG []byte `json:"-"`
	// SHA256 binds the approval to the action: see Digest.
	SHA256 string `json:"sha256"`
	// StateSHA256 binds it to what the action's targets were as they
	// were shown (existence, kind, identity, size, revision): the digest
	// of policy.Action.State, "" when the action shows none. The
	// identical request finds the approval by SHA256, and may use it only
	// with the same state.
	StateSHA256 string `json:"state_sha256,omitempty"`
}

// Target is one workdir location an action acts on.
type Target struct {
	Workdir     string   `json:"workdir"`      // alias
	WorkdirPath string   `json:"workdir_path"` // canonical directory
	Rel         string   `json:"rel"`          // workdir-relative path as the request names it, '/'-separated
	Real        string   `json:"real"`         // Rel with every link resolved; "" when it could not be
	Classes     []string `json:"classes,omitempty"`
}

// Image is the observation an input act refers to, as its approval shows
// it.
type Image struct {
	ObservationID string `json:"observation_id"`
	Width         int    `json:"width"`  // of the PNG, in pixels
	Height        int    `json:"height"` // of the PNG, in pixels
	// Marks are drawn on the PNG; their points are the PNG's pixels.
	Marks  []Mark `json:"marks,omitempty"`
	Window string `json:"window,omitempty"` // the window under the act
	Text   string `json:"text,omitempty"`   // text the act types
}

// Mark is one thing an act does, drawn on its observation.
type Mark struct {
	Kind   string   `json:"kind"` // "click", "drag", "scroll", "move"
	Points [][2]int `json:"points"`
}

// Approval is one action waiting for, or having had, the user's decision.
type Approval struct {
	ID         string             `json:"id"`
	State      State              `json:"state"`
	Action     Action             `json:"action"`
	Created    time.Time          `json:"created"`
	Deadline   time.Time          `json:"deadline" jsonschema:"pending: decide before it; approved: used before it"`
	Decided    time.Time          `json:"decided,omitzero"`
	DecidedBy  string             `json:"decided_by,omitempty"`
	DecidedVia auditapi.Transport `json:"decided_via,omitempty"`
	// Scope is the scope it was approved with; Grant the grant that
	// decision made (a scope other than once).
	Scope Scope  `json:"scope,omitempty"`
	Grant string `json:"grant,omitempty"`
	// UsedAt is when the call it covers ran.
	UsedAt time.Time `json:"used_at,omitzero"`
	// Proposal is the decision proposed on the control channel under
	// confirm_in_person, waiting for the person's confirmation (kept once
	// decided, to show who proposed it).
	Proposal *Proposal `json:"proposal,omitempty"`
	// SessionEnded: the client session that asked has ended (it
	// disconnected), so a "this session" grant would cover nothing.
	SessionEnded bool `json:"session_ended,omitempty"`
}

// Scope is how far a decision reaches beyond the one action it answers.
type Scope string

// Scopes. Once is the default: the approval covers its one exact action.
// Every other scope makes a Grant, which lets later actions it covers run
// without asking until it ends or is revoked. A grant is only consulted
// where the policy says ask: no grant ever lets through what deny refuses.
const (
	ScopeOnce Scope = "once"
	// ScopeSession: this class of action from this client session (the
	// MCP session or control-channel connection, as the daemon measured
	// it), in any workdir, until the session ends.
	ScopeSession Scope = "session"
	// ScopeClass: this class of action in this workdir, from any client,
	// for Decision.Minutes.
	ScopeClass Scope = "class"
	// ScopePath: writes (files_write) below a directory of this workdir,
	// as written and as resolved: never through a link leading out of it,
	// and never to the directory itself or anything above it (deleting or
	// moving the directory is not a write below it). The workdir's root
	// cannot be granted so: that is ScopeClass, with its window.
	ScopePath Scope = "path"
	// ScopeCommand: this exact command line, without environment
	// variables, in this workdir.
	ScopeCommand Scope = "command"
	// ScopeArgvPrefix: argv commands whose argv starts with
	// Decision.ArgvPrefix (which the user may shorten from the action's
	// argv), without environment variables, in this workdir.
	ScopeArgvPrefix Scope = "argv_prefix"
)

// Grant lets the actions it covers run without asking. Grants are held in
// memory only and end with the daemon, unless saved to the configuration
// (then the configuration's allow rule, not the grant, lets them through
// after a restart).
type Grant struct {
	ID    string `json:"id"` // "grt_…"
	Scope Scope  `json:"scope"`
	// Covers says in words what the grant lets run, e.g. "files_write in
	// workdir proj (/home/u/proj) from any client for 10 minutes".
	Covers string `json:"covers"`
	// Session and Client: for ScopeSession, the session key the grant is
	// bound to and who that session is (transport and measured peer).
	Session string `json:"session,omitempty"`
	Client  string `json:"client,omitempty"`
	// Workdir (alias) and WorkdirPath (canonical directory); empty for
	// ScopeSession, which covers every workdir.
	Workdir     string `json:"workdir,omitempty"`
	WorkdirPath string `json:"workdir_path,omitempty"`
	Class       string `json:"class"`
	// PathPrefix (ScopePath): the workdir-relative directory, resolved,
	// '/'-separated; never "." (the whole workdir is ScopeClass).
	PathPrefix string `json:"path_prefix,omitempty"`
	// CommandLine (ScopeCommand) or ArgvPrefix (ScopeArgvPrefix).
	CommandLine string    `json:"command_line,omitempty"`
	ArgvPrefix  []string  `json:"argv_prefix,omitempty"`
	Created     time.Time `json:"created"`
	// Expires is when the grant ends; zero: when the session ends
	// (ScopeSession) or the daemon stops.
	Expires time.Time `json:"expires,omitzero"`
	// Ends says when it ends, in words.
	Ends string `json:"ends"`
	Uses int    `json:"uses"` // actions it has let run
	// Saved: written to the configuration (see Daemon.SaveGrant).
	Saved bool `json:"saved"`
	// Approval is the approval whose decision made the grant; GrantedBy
	// and GrantedVia who decided it.
	Approval   string `json:"approval"`
	GrantedBy  string `json:"granted_by"`
	GrantedVia string `json:"granted_via"`
	// Ended is when a grant no longer in force ended, and EndedWhy why:
	// its session ended, it was revoked, its window passed.
	Ended    time.Time `json:"ended,omitzero"`
	EndedWhy string    `json:"ended_why,omitempty"`
}

// Proposal is an approval decided on a channel that cannot tell a person
// from a program of the user's (the control channel, that is `hostlink
// approvals approve`) while [policy] confirm_in_person is on: the
// decision waits, with the approval still pending, until the person
// confirms it on a surface that needs them at the desktop (Decision.Person:
// the console, a notification's button), or decides otherwise there.
type Proposal struct {
	ID         string   `json:"id"` // "prp_…"; a confirmation names it
	Scope      Scope    `json:"scope"`
	Minutes    int      `json:"minutes,omitempty"`
	Path       string   `json:"path,omitempty"`
	ArgvPrefix []string `json:"argv_prefix,omitempty"`
	// Covers says in words what confirming allows: the one action, or
	// what the grant it makes covers.
	Covers string             `json:"covers"`
	By     string             `json:"by"`
	Via    auditapi.Transport `json:"via"`
	At     time.Time          `json:"at"`
}

// BatchResult is one approval's outcome in DecideBatch.
type BatchResult struct {
	ID       string         `json:"id"`
	Approval Approval       `json:"approval,omitzero"`
	Error    *errcode.Error `json:"error,omitempty"`
}
