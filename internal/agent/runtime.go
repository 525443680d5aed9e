package agent

import (
	"context"
	"encoding/json"
	"errors"

	"github.com/hostlink/hostlink/internal/agentapi"
)

// Access is what a task may do in its workdir.
type Access string

// The access modes a task can ask for; a workdir's agent_mode caps them.
const (
	ReadOnly       Access = "read-only"
	WorkspaceWrite Access = "workspace-write"
)

// Runtime is an adapter over one local agent runtime (Codex, Claude Code,
// Qoder, the test fake). The runtimes hostlink knows speak a line protocol
// over a child process's stdin and stdout; an adapter starts that process
// through internal/procs (its own process group or Job Object), translates
// the protocol to these calls and reports what the runtime says to a Sink.
//
// Methods may be called from several goroutines. An adapter never decides
// policy: it passes approvals and questions through as the runtime offered
// them, and the engine answers them only with what a client chose.
type Runtime interface {
	// Name is the runtime's stable name: "codex", "claude", "qoder", "fake".
	Name() string
	// Probe reports readiness using read-only checks only (version, login
	// status where the CLI can tell without changing anything).
	Probe(ctx context.Context) agentapi.Readiness
	// Models lists the models the runtime reports, or returns
	// ErrModelsUnsupported when it has no way to list them: never a
	// guessed list.
	Models(ctx context.Context) ([]agentapi.Model, error)
	// Start starts a new session (a thread) in spec.Dir. Everything the
	// runtime reports for it goes to sink, from the adapter's goroutines.
	Start(ctx context.Context, spec SessionSpec, sink Sink) (Session, error)
	// Resume reattaches, in a new process, to a session a previous
	// hostlink process started, and reports what the runtime can prove
	// about that session's last turn.
	Resume(ctx context.Context, spec SessionSpec, sessionID string, sink Sink) (Session, TurnState, error)
}

// ErrModelsUnsupported is returned by Runtime.Models when the runtime has
// no model discovery.
var ErrModelsUnsupported = errors.New("agent: the runtime cannot list its models")

// SessionSpec says where and how a session runs.
type SessionSpec struct {
	TaskID string
	Dir    string // absolute working directory, inside the workdir
	Model  string // "" for the runtime's default
	Access Access
	// StateDir is a private directory the adapter may keep the session's
	// files in (a CODEX_HOME overlay, a transcript); it survives restarts.
	StateDir string
	// Continue is the runtime session of an earlier task this one
	// continues (through Runtime.Resume), "" for a new session.
	Continue string
}

// Session is a runtime session (Codex thread, Claude/Qoder session) driven
// by one process.
type Session interface {
	// ID is the runtime's own session or thread id, used to resume.
	ID() string
	// StartTurn starts a turn with input and returns the turn's id (the
	// runtime's, or one the adapter makes up if the runtime has none).
	StartTurn(ctx context.Context, input string) (turnID string, err error)
	// Steer adds input to the running turn.
	Steer(ctx context.Context, turnID, input string) error
	// Interrupt asks the runtime to end the turn; it reports the end to
	// the Sink (as interrupted) when it has.
	Interrupt(ctx context.Context, turnID string) error
	// Resolve answers an approval or question the runtime asked.
	Resolve(ctx context.Context, requestID string, r Resolution) error
	// Close ends the session's process and waits for it.
	Close() error
}

// Sink receives what a runtime reports about a session. Calls for one
// session arrive in order, from one goroutine at a time.
type Sink interface {
	// Item reports an item (message, command, file change, reasoning...)
	// starting, growing or completing.
	Item(Item)
	// Request reports an approval or question the runtime is waiting on.
	Request(Request)
	// Withdraw reports that the runtime no longer waits on a request (its
	// turn was interrupted, say).
	Withdraw(requestID string)
	// TurnEnded reports the end of a turn.
	TurnEnded(TurnEnd)
	// Exited reports that the session's process ended; err says why when
	// it was not asked to.
	Exited(err error)
}

// Item phases.
const (
	ItemStarted   = "started"
	ItemDelta     = "delta"
	ItemCompleted = "completed"
)

// Item is a unit of a turn's output.
type Item struct {
	TurnID string
	ItemID string
	Kind   string // agent_message, command, file_change, reasoning, ...
	Phase  string // ItemStarted, ItemDelta or ItemCompleted
	Text   string
	Data   map[string]any
}

// Request kinds.
const (
	KindApproval = "approval"
	KindQuestion = "question"
)

// Request is an approval or question the runtime waits on.
type Request struct {
	ID      string // the runtime's id for it
	TurnID  string
	ItemID  string
	Kind    string // KindApproval or KindQuestion
	Summary string
	Detail  map[string]any // command, cwd, reason, diff...
	// Decisions are the approval decisions the runtime offers, exactly as
	// it spells them: strings ("accept") or objects
	// ({"acceptWithExecpolicyAmendment": {...}}).
	Decisions []json.RawMessage
	Questions []agentapi.Question
}

// Resolution answers a Request: Decision for an approval (one of the
// offered decisions, verbatim), Answers for a question.
type Resolution struct {
	Decision json.RawMessage
	Answers  map[string][]string
}

// TurnStatus is how a turn ended.
type TurnStatus string

// Turn endings.
const (
	TurnCompleted   TurnStatus = "completed"
	TurnInterrupted TurnStatus = "interrupted"
	TurnFailed      TurnStatus = "failed"
)

// TurnEnd reports the end of a turn.
type TurnEnd struct {
	TurnID string
	Status TurnStatus
	Result string // the final answer of a completed turn
	Error  string // why a failed turn failed
}

// TurnState is what Resume could prove about a session's last turn.
type TurnState struct {
	Known  bool // false: the runtime cannot say
	TurnID string
	Status TurnStatus // completed or interrupted; "" while still running
	Result string
}
