package policy

import (
	"context"
	"slices"
	"sync"
	"sync/atomic"

	"github.com/hostlink/hostlink/internal/approvals"
	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/glob"
)

// CodeDenied: the local policy denies this operation (in this workdir).
const CodeDenied errcode.Code = "POLICY_DENIED"

// CodeClassNotOffered: the transport offers the caller only some classes
// (Request.Offered, the machine's [mesh] classes) and the action needs
// another; details.class names it.
const CodeClassNotOffered errcode.Code = "CLASS_NOT_OFFERED"

// Engine holds the policy in force and the approvals it asks for.
type Engine struct {
	cfg    atomic.Pointer[Config]
	broker *approvals.Broker
	asked  sync.Map // approval ids put to a client's prompt
}

// New returns an Engine enforcing cfg, asking through b.
func New(cfg Config, b *approvals.Broker) *Engine {
	e := &Engine{broker: b}
	e.Set(cfg)
	return e
}

// Set replaces the policy (on reload). Calls already past the policy are
// not affected; approvals already pending keep their deadlines.
func (e *Engine) Set(cfg Config) {
	e.cfg.Store(&cfg)
	e.broker.SetTimes(cfg.Timeout, cfg.Wait)
	e.broker.SetConfirmInPerson(cfg.ConfirmInPerson)
}

// Config returns the policy in force.
func (e *Engine) Config() Config { return *e.cfg.Load() }

// Broker returns the approval broker.
func (e *Engine) Broker() *approvals.Broker { return e.broker }

// Request is one call as the policy judges it.
type Request struct {
	Op, Title string
	Class     Class
	// NoAsk: under ask the call runs without asking (it only looks at work
	// already approved, or lists what exists); deny still refuses it.
	NoAsk     bool
	Transport audit.Transport
	Peer      string
	// Session is the caller's session key (ops.Caller.Session).
	Session string
	// OwnApproval binds an approval to Peer too: a platform session's
	// approvals are its own.
	OwnApproval bool
	// In is the decoded request, as the caller sent it: what an approval
	// binds (unless the description names a Binding), and what is shown
	// argument by argument when there is no description.
	In any
	// Describe, if set, describes the request (the operation's own
	// description of its normalized request); else a Describer In
	// describes itself.
	Describe func(DescribeContext) (Action, error)
	Hooks    Hooks
	// Waiting, if set, is told of the approval before the call is held
	// for it: the transport shows the caller what it waits for.
	Waiting func(approvals.Approval)
	// Ask, if set, puts an approval to the client application's own
	// prompt; it is used only under approve_in_client.
	Ask func(ctx context.Context, a approvals.Approval) (bool, error)
	// Offered, if not nil, are the only classes the caller's transport
	// may use at all (ops.Caller.Classes): an action needing another is
	// refused whatever the modes say, before anyone is asked.
	Offered []Class
}

// Decision is how a call was let through, for the audit record.
type Decision struct {
	Rule       string // "allow_rule", "grant" or "ask" (approved); "" when its mode allowed it
	ApprovalID string
	GrantID    string // the grant that let it run, for Rule "grant"
	// State is what the user approved the targets as (Action.State), for
	// Rule "ask": the operation must find them so as it acts. A grant or
	// a rule was shown no state, and binds none.
	State map[string]Extent
}

// Decide judges one call: nil to run it, POLICY_DENIED, or under ask the
// approval's outcome (APPROVAL_PENDING while the user has not decided). It
// may block for the broker's wait and honours ctx. The Decision says how
// the call was let through, and on an ask which approval it concerned.
func (e *Engine) Decide(ctx context.Context, r Request) (Decision, error) {
	cfg := e.cfg.Load()
	if r.Offered != nil {
		if err := notOffered(r); err != nil {
			return Decision{}, err
		}
	}
	if cfg.allowsAll() {
		return Decision{}, nil
	}
	act, err := describe(r)
	if err != nil {
		return Decision{}, err
	}
	if act.Class != "" {
		r.Class = act.Class
	}
	mode := Allow
	for _, t := range act.Touches {
		for _, c := range t.Classes {
			mode = stricter(mode, cfg.Mode(c, t.Workdir))
		}
	}
	if len(act.Touches) == 0 {
		mode = cfg.Mode(r.Class, "")
	}
	switch {
	case mode == Deny:
		return Decision{Rule: "deny"}, denied(cfg, r, act)
	case mode == Allow || r.NoAsk:
		return Decision{}, nil
	case act.Refuse != nil:
		// It would fail anyway: nobody is asked about it.
		return Decision{}, act.Refuse
	case !act.NoRule && allowedByRule(cfg, act):
		return Decision{Rule: "allow_rule"}, nil
	}
	a := approvals.Action{Op: r.Op, Class: string(r.Class), Transport: r.Transport, Peer: r.Peer, Session: r.Session,
		Summary: act.Summary, Fields: act.Fields, CommandLine: act.CommandLine, Argv: act.Argv, HasEnv: act.HasEnv,
		Diff: act.Diff, Image: act.Image, PNG: act.PNG}
	var dirs []string
	for _, t := range act.Touches {
		if a.Workdir == "" {
			a.Workdir, a.WorkdirPath = t.Workdir, t.Dir
		}
		if !slices.Contains(dirs, t.Dir) {
			dirs = append(dirs, t.Dir)
		}
		tg := approvals.Target{Workdir: t.Workdir, WorkdirPath: t.Dir, Rel: t.Rel, Real: t.Real}
		for _, c := range t.Classes {
			tg.Classes = append(tg.Classes, string(c))
		}
		a.Targets = append(a.Targets, tg)
	}
	bound := act.Binding
	if bound == nil {
		bound = r.In
	}
	binding := map[string]any{"op": r.Op, "transport": r.Transport, "dirs": dirs, "args": bound}
	if r.OwnApproval {
		binding["peer"] = r.Peer
	}
	a.SHA256 = approvals.Digest(binding)
	// The state is bound apart from the request: the identical request
	// finds its approval by the request, and the broker refuses it
	// (CONFLICT) when what it acts on is no longer what was shown.
	if len(act.State) > 0 {
		a.StateSHA256 = approvals.Digest(act.State)
	}
	// A grant is consulted only here, where the mode is ask: it never
	// lets through what deny refuses. It answers for its own class only,
	// so not for an action that also needs another class that asks.
	if othersAllowed(cfg, act, r.Class) {
		if g, ok := e.broker.Covered(a); ok {
			return Decision{Rule: "grant", GrantID: g.ID}, nil
		}
	}
	waiting := r.Waiting
	if cfg.ApproveInClient && !cfg.ConfirmInPerson && r.Ask != nil {
		waiting = func(ap approvals.Approval) {
			e.askClient(ctx, r, ap)
			if r.Waiting != nil {
				r.Waiting(ap)
			}
		}
	}
	id, err := e.broker.RequireNotify(ctx, a, waiting)
	d := Decision{Rule: "ask", ApprovalID: id}
	if err == nil {
		d.State = act.State
	}
	return d, err
}

// othersAllowed reports whether every class act needs besides class is
// allowed where it needs it: a grant of class (which the user made for
// that class) then answers for the whole action. Where files_read asks, a
// grant for writes must not let an edit show a file's lines or a move
// carry a file out of its workdir. Unsandboxed commands are commands.
func othersAllowed(cfg *Config, act Action, class Class) bool {
	for _, t := range act.Touches {
		for _, c := range t.Classes {
			if c != class && !(class == CommandsUnsandboxed && c == Commands) && cfg.Mode(c, t.Workdir) != Allow {
				return false
			}
		}
	}
	return true
}

// askClient puts approval ap to the asking client's own prompt, once per
// approval, and records the answer as the client's decision. The prompt
// outlives the call that asked (which answers APPROVAL_PENDING after the
// wait), until the approval's deadline; a dismissed prompt leaves the
// approval pending for the user's other channels.
func (e *Engine) askClient(ctx context.Context, r Request, ap approvals.Approval) {
	if _, dup := e.asked.LoadOrStore(ap.ID, true); dup {
		return
	}
	go func() {
		defer e.asked.Delete(ap.ID)
		ctx, cancel := context.WithDeadline(context.WithoutCancel(ctx), ap.Deadline)
		defer cancel()
		approve, err := r.Ask(ctx, ap)
		if err != nil {
			return
		}
		// Another channel may have decided first: then this answer is moot.
		e.broker.DecideWith(ap.ID, approvals.Decision{Approve: approve, By: r.Peer, Via: r.Transport})
	}()
}

// Pending reports whether err is the policy's answer that the user has not
// decided yet: the call did not run and the identical request may run later.
func Pending(err error) bool { return errcode.CodeOf(err) == approvals.CodePending }

// describe has the request described (Request.Describe, or the request
// itself) and fills in what every description shows: the operation, who asks, and each touch's classes.
func describe(r Request) (Action, error) {
	dc := DescribeContext{Op: r.Op, Class: r.Class, hooks: r.Hooks, transport: r.Transport}
	var act Action
	describe := r.Describe
	if d, ok := r.In.(Describer); ok && describe == nil {
		describe = d.Describe
	}
	if describe != nil {
		var err error
		if act, err = describe(dc); err != nil {
			return act, err
		}
	} else {
		act.Summary = r.Op + " " + ArgsFields(&act, r.In)
	}
	if act.Summary == "" {
		act.Summary = r.Op
	}
	act.Fields = append([]approvals.Field{
		{Label: "Operation", Value: r.Op + " (" + r.Title + ")"},
		{Label: "Requested by", Value: string(r.Transport) + " " + r.Peer},
	}, act.Fields...)
	for i := range act.Touches {
		for _, c := range []Class{act.Class, r.Class} {
			if c != "" && !slices.Contains(act.Touches[i].Classes, c) {
				act.Touches[i].Classes = append([]Class{c}, act.Touches[i].Classes...)
			}
		}
	}
	return act, nil
}

// denied is POLICY_DENIED naming the class that denies: the operation's
// own, or another one a touch needs (reading what an edit shows, say).
func denied(cfg *Config, r Request, act Action) error {
	class := r.Class
	if len(act.Touches) > 0 && !slices.ContainsFunc(act.Touches, func(t Touch) bool { return cfg.Mode(r.Class, t.Workdir) == Deny }) {
		for _, t := range act.Touches {
			if i := slices.IndexFunc(t.Classes, func(c Class) bool { return cfg.Mode(c, t.Workdir) == Deny }); i >= 0 {
				class = t.Classes[i]
				break
			}
		}
	}
	return errcode.New(CodeDenied, "the local policy denies %s here (%s = deny); only the user at this computer can change that", r.Op, class).
		With("class", string(class))
}

// notOffered refuses an action needing a class outside r.Offered: the
// operation's own class and every class a touch needs.
func notOffered(r Request) error {
	act, err := describe(r)
	if err != nil {
		return err
	}
	need := []Class{r.Class}
	if act.Class != "" {
		need = append(need, act.Class)
	}
	for _, t := range act.Touches {
		need = append(need, t.Classes...)
	}
	for _, c := range need {
		if !slices.Contains(r.Offered, c) {
			return errcode.New(CodeClassNotOffered, "%s needs %s, which this computer does not offer over %s: only its local user can add it", r.Op, c, r.Transport).
				With("class", string(c))
		}
	}
	return nil
}

// allowedByRule reports whether an allow rule covers the action: every
// command line in allow_commands (and no environment), or every path, as
// written and as resolved, matching allow_paths of its workdir. A path
// rule vouches for file operations only: another action that names a
// directory (an agent task's, which runs a program that can do anything
// the user can) is not a file operation there, whatever its path matches.
func allowedByRule(cfg *Config, act Action) bool {
	if len(act.Touches) == 0 {
		return false
	}
	for _, t := range act.Touches {
		cmds, globs := cfg.allowLists(t.Workdir)
		switch {
		case act.CommandLine != "":
			if act.HasEnv || !slices.Contains(cmds, act.CommandLine) {
				return false
			}
		case t.Real == "":
			// Not resolvable: no rule can vouch for what it reaches.
			return false
		case slices.ContainsFunc(t.Classes, func(c Class) bool { return c != FilesRead && c != FilesWrite }):
			return false
		default:
			if !glob.MatchAny(globs, t.Rel, false) || !glob.MatchAny(globs, t.Real, false) {
				return false
			}
		}
	}
	return true
}
