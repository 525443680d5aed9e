package ops

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"github.com/hostlink/hostlink/internal/textsafe"
	"maps"
	"sync"
	"time"

	"github.com/hostlink/hostlink/internal/approvalsapi"
	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/auditapi"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/policy"
)

// Caller says who is calling, as the transport measured it.
type Caller struct {
	Transport audit.Transport
	Peer      string
	// Session is a key the transport made for the client's session (one
	// MCP session, one control-channel connection), never a name the
	// client chose: what a "this session" grant is bound to. "" when the
	// transport has no sessions to tell apart.
	Session   string
	RequestID string
	// Ask, if set, puts an approval to the client application's own
	// prompt (MCP elicitation), for [policy] approve_in_client.
	Ask AskFunc
	// Nested marks a call a transport makes while serving a request it
	// has already counted against the budgets, such as the observation
	// the link takes to place an INPUT_ACTION: it is audited and judged
	// by the policy like any other, but takes no budget.
	Nested bool
	// Bounds are the connection's negotiated limits, applied to every
	// call it makes (zero: none beyond the operations' own).
	Bounds Bounds
	// Child: the caller is a process hostlink started (a command, an
	// agent runtime, a helper) or a descendant of one, as the transport
	// measured it. It acts for an agent, whatever channel it uses: it may
	// call only what agents may (Spec.AgentSafe; USER_ONLY otherwise), and
	// is never asked to approve anything (Ask is ignored).
	Child bool
	// Classes, if not nil, are the only policy classes the caller may use
	// at all, whatever the policy's modes: the machine's [mesh] classes
	// for callers over the mesh.
	Classes []policy.Class
}

// AskFunc asks the client application's user to approve a: true to
// approve, false to deny, an error when nobody answered.
type AskFunc func(ctx context.Context, a approvalsapi.Approval) (approve bool, err error)

// NewSessionKey returns a new session key for a client session of
// transport: random, so that no client can name another's session.
func NewSessionKey(t audit.Transport) string {
	var raw [12]byte
	rand.Read(raw[:])
	return string(t) + ":" + hex.EncodeToString(raw[:])
}

// ProgressFunc reports progress of a long operation; total is 0 when unknown.
type ProgressFunc func(done, total float64, message string)

// Call is one invocation, handed to the handler. Handlers note what the
// audit record should say (workdir, root-relative paths, bytes, details)
// through its methods; the registry writes the record.
type Call struct {
	Caller
	progress ProgressFunc

	mu      sync.Mutex
	workdir string
	paths   []string
	bytes   int64
	details map[string]any
	// asked is what the decoded request names (Targeted), recorded as
	// requested_paths when the call is refused before it placed them.
	asked []string
	// shown is what the user approved the targets as (see Shown).
	shown map[string]policy.Extent
}

// Shown is what the approval this call runs on showed at the target role
// names ("path", "src", "dst"; see policy.Action.State). ok is false when
// the call runs on no approval (its mode allows it, a rule or a grant
// covers it) or the approval showed no state there: then no state binds
// it. An operation that finds something else there as it acts must fail
// with CONFLICT and change nothing.
func (c *Call) Shown(role string) (ext policy.Extent, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	ext, ok = c.shown[role]
	return ext, ok
}

// Progress reports progress to the caller, if its transport supports it.
func (c *Call) Progress(done, total float64, message string) {
	if c.progress != nil {
		c.progress(done, total, message)
	}
}

// Targeted is a request that names what it acts on, for the audit
// record. The registry asks the normalized request (RegisterNormalized):
// where it placed its paths, or what it attempted when it refused them. A
// decoded request implements it to say which paths it asks for, as the
// caller wrote them: a call refused before anything placed them records
// those (details requested_paths), so that a refusal is not a blank line.
type Targeted interface {
	AuditTarget() auditapi.Target
}

// Target records the workdir and root-relative paths the call acts on,
// for a handler that finds them only as it acts (a command's directory,
// an agent task's); a normalized request names its own (Targeted).
func (c *Call) Target(workdir string, paths ...string) {
	c.target(auditapi.Target{Workdir: workdir, Paths: paths})
}

func (c *Call) target(t auditapi.Target) {
	c.mu.Lock()
	c.workdir = t.Workdir
	c.paths = append(c.paths, t.Paths...)
	c.mu.Unlock()
	if t.Outside {
		c.Detail("path_outside", true)
	}
}

// ask notes what the decoded request in asks for (Targeted).
func (c *Call) ask(in any) {
	t, ok := in.(Targeted)
	if !ok {
		return
	}
	var asked []string
	for _, p := range t.AuditTarget().Paths {
		if p != "" {
			asked = append(asked, textsafe.Clip(p, 512))
		}
	}
	c.mu.Lock()
	c.asked = asked
	c.mu.Unlock()
}

// AddBytes records bytes read, written or returned.
func (c *Call) AddBytes(n int64) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.bytes += n
}

// Detail records a small fact for the audit record. Never pass contents,
// tokens or environment values.
func (c *Call) Detail(key string, value any) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.details == nil {
		c.details = make(map[string]any)
	}
	c.details[key] = value
}

func (c *Call) record(op string, start time.Time, err error) audit.Record {
	c.mu.Lock()
	defer c.mu.Unlock()
	code := "OK"
	if err != nil {
		code = string(errcode.CodeOf(err))
	}
	details := c.details
	if c.Session != "" {
		// Which client session made the call, for grouping its records
		// (an HTTP session's calls arrive on several connections).
		details = maps.Clone(details)
		if details == nil {
			details = map[string]any{}
		}
		details["session"] = audit.SessionRef(c.Session)
	}
	if err != nil && len(c.paths) == 0 {
		// Refused before anything placed its target (a request that
		// places none as it normalizes, refused by the policy or by its
		// handler before it named one): the record says which path was
		// asked for, so that a refusal is not a blank line.
		if len(c.asked) > 0 {
			details = maps.Clone(details)
			if details == nil {
				details = map[string]any{}
			}
			details["requested_paths"] = c.asked
		}
	}
	return audit.Record{
		Time:      start,
		Transport: c.Transport,
		Peer:      c.Peer,
		Op:        textsafe.Clip(op, 64),
		RequestID: textsafe.Clip(c.RequestID, 128),
		Workdir:   c.workdir,
		Paths:     c.paths,
		Code:      code,
		Bytes:     c.bytes,
		Duration:  time.Since(start),
		Details:   details,
	}
}
