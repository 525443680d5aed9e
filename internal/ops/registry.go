package ops

import (
	"context"
	"encoding/json"
	"fmt"
	"github.com/hostlink/hostlink/internal/textsafe"
	"log/slog"
	"reflect"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/policy"
)

// Op is a registered operation.
type Op struct {
	Spec
	InputSchema  *jsonschema.Schema
	OutputSchema *jsonschema.Schema
	// Describes reports that the operation describes its requests to the
	// policy: a description registered with it (RegisterNormalized) or a
	// request type that describes itself (policy.Describer). Every
	// operation hostlink registers does.
	Describes bool
	// Out is the response type, for adapters that present some responses
	// their own way (mcpserve checks the methods it implements).
	Out reflect.Type

	decode func(args []byte) (any, error) // JSON arguments to In
	check  func(in any) (any, error)      // a transport's own In, validated
	// normalize turns the decoded In into what describe and handle take
	// (N; see RegisterNormalized); nil: they take In itself.
	normalize func(in any) (any, error)
	// describe describes a normalized request to the policy; nil: the
	// request describes itself, or is shown argument by argument.
	describe func(n any, dc policy.DescribeContext) (policy.Action, error)
	handle   func(ctx context.Context, c *Call, n any) (any, error)
	bound    func(in any, b Bounds) (any, error) // nil unless *In is Bounded
	// resolve prepares the input schema for validation, on first use.
	resolve func() (*jsonschema.Resolved, error)
	// inJSON and outJSON encode the schemas, once per process.
	inJSON, outJSON func() json.RawMessage
}

// InputSchemaJSON is InputSchema as JSON, encoded once per process and
// shared: callers must not change it.
func (op *Op) InputSchemaJSON() json.RawMessage { return op.inJSON() }

// OutputSchemaJSON is OutputSchema as JSON, encoded once per process and
// shared: callers must not change it.
func (op *Op) OutputSchemaJSON() json.RawMessage { return op.outJSON() }

// CheckSchema resolves the operation's input schema, which registering
// leaves to the first call; tests use it to find a bad schema at once.
func (op *Op) CheckSchema() error {
	_, err := op.resolve()
	return err
}

// Auditor records one line per call. audit.Log implements it.
type Auditor interface {
	// Check reports whether a record could be written now; a call is
	// refused before it runs when it could not.
	Check() error
	Append(audit.Record) error
}

// Policy decides whether a caller may run an operation, after the request
// is validated and normalized and before the handler runs. in is the
// decoded request (the operation's In value, what an approval binds) and
// n the normalized one (what the handler gets; in itself for an operation
// without a normalize step), so that a policy can judge the exact action
// (Op.Describe); a policy may block (waiting for the user) and must honour
// ctx. Gate makes one from a policy.Engine.
type Policy interface {
	Allow(ctx context.Context, c *Call, op *Op, in, n any) error
}

// Describe is how op describes the normalized request n to the policy:
// the description registered with op, else n's own (policy.Describer);
// nil when there is neither (the policy then shows the arguments).
func (op *Op) Describe(n any) func(policy.DescribeContext) (policy.Action, error) {
	if op.describe != nil {
		return func(dc policy.DescribeContext) (policy.Action, error) { return op.describe(n, dc) }
	}
	if d, ok := n.(policy.Describer); ok {
		return d.Describe
	}
	return nil
}

// Options configure a Registry.
type Options struct {
	Audit  Auditor // required
	Policy Policy  // nil: every call is allowed
	// Budgets counts the use of the specs' budgets; registries that share
	// one share the limits. Nil: the registry's own.
	Budgets *Budgets
	// Results, if set, is shown every successful call's result after it
	// is audited (the console keeps thumbnails of observations). It must
	// not change the result, and must return quickly.
	Results func(c Caller, op string, out any)
	// Running, if set, is called as each call starts, and the function it
	// returns once the call is recorded: the daemon gives memory back once
	// calls stop (package memtrim).
	Running func() (done func())
}

// Registry holds the operations. It is safe for concurrent use once
// registration is done.
type Registry struct {
	mu      sync.RWMutex
	ops     map[string]*Op
	sealed  bool
	off     map[string]disabled // operations of capabilities the local user has not enabled
	audit   Auditor
	policy  Policy
	budgets *Budgets
	results func(Caller, string, any)
	running func() func()
}

// New returns an empty registry.
func New(o Options) *Registry {
	if o.Budgets == nil {
		o.Budgets = NewBudgets()
	}
	return &Registry{ops: make(map[string]*Op), audit: o.Audit, policy: o.Policy, budgets: o.Budgets, results: o.Results, running: o.Running}
}

// Handler is an operation's implementation.
type Handler[In, Out any] func(ctx context.Context, c *Call, in In) (Out, error)

// Register adds an operation whose request describes itself (or is
// shown argument by argument) and goes to the handler as decoded. It
// panics on an incomplete spec (no name, description, known class or
// transports), a duplicate name, a sealed registry, or a type that has no
// JSON schema: all programming errors found at start-up.
func Register[In, Out any](r *Registry, spec Spec, h Handler[In, Out]) *Op {
	return RegisterNormalized[In, In, Out](r, spec, nil, nil, h)
}

// RegisterNormalized adds an operation whose decoded request In is
// normalized once, into N, before anything judges or runs it: defaults
// applied, content decoded, choices checked, paths placed. describe (the
// policy's view) and h both take that N, so that neither does the work
// again. normalize runs after the schema and the connection's bounds and
// before the policy; its error refuses the call. When N names what it
// acts on (Targeted), the audit record names that, even when normalize
// refused the call (it returns what it could place with the error). A nil
// normalize makes N the request itself (In must then be N); a nil
// describe leaves the description to N (policy.Describer). It panics as
// Register does.
func RegisterNormalized[In, N, Out any](r *Registry, spec Spec, normalize func(In) (N, error), describe func(N, policy.DescribeContext) (policy.Action, error), h Handler[N, Out]) *Op {
	switch {
	case spec.Name == "" || spec.Description == "":
		panic(fmt.Sprintf("ops: %q needs a name and a description", spec.Name))
	case !policy.Known(spec.Class):
		panic(fmt.Sprintf("ops: %s: class %q is not a policy class", spec.Name, spec.Class))
	case len(spec.Transports) == 0:
		panic(fmt.Sprintf("ops: %s offers no transport", spec.Name))
	}
	in, out := cachedSchema[In](false), cachedSchema[Out](true)
	if in.err != nil {
		panic(fmt.Sprintf("ops: %s input: %v", spec.Name, in.err))
	}
	if out.err != nil {
		panic(fmt.Sprintf("ops: %s output: %v", spec.Name, out.err))
	}
	// The input schema is resolved on first use (schemacache.go); a
	// schema that does not resolve is a programming error, reported as
	// internal rather than blamed on the caller's arguments.
	resolved := func() (*jsonschema.Resolved, error) {
		rs, err := in.resolved()
		if err != nil {
			return nil, errcode.New(errcode.Internal, "%s input schema: %v", spec.Name, err)
		}
		return rs, nil
	}
	var zero N
	_, describes := any(zero).(policy.Describer)
	op := &Op{Spec: spec, InputSchema: in.schema, OutputSchema: out.schema, Describes: describes || describe != nil, Out: reflect.TypeFor[Out](), resolve: in.resolved, inJSON: in.encoded, outJSON: out.encoded}
	switch {
	case normalize != nil:
		op.normalize = func(in any) (any, error) {
			n, err := normalize(in.(In))
			return n, err
		}
	case reflect.TypeFor[In]() != reflect.TypeFor[N]():
		panic(fmt.Sprintf("ops: %s: a %v request needs a normalize step to become a %v", spec.Name, reflect.TypeFor[In](), reflect.TypeFor[N]()))
	}
	if describe != nil {
		op.describe = func(n any, dc policy.DescribeContext) (policy.Action, error) { return describe(n.(N), dc) }
	}
	op.decode = func(args []byte) (any, error) {
		var v In
		rs, err := resolved()
		if err == nil {
			err = decode(rs, args, &v)
		}
		return v, err
	}
	op.check = func(in any) (any, error) {
		v, ok := in.(In)
		if !ok {
			return nil, errcode.New(errcode.Internal, "%s called with a %T", spec.Name, in)
		}
		// The schema checks what the value encodes to (jsonschema-go
		// validates JSON values, not structs); the value itself is not
		// decoded again.
		b, err := json.Marshal(v)
		if err != nil {
			return nil, errcode.New(errcode.InvalidArgument, "arguments are not valid JSON")
		}
		rs, err := resolved()
		if err != nil {
			return nil, err
		}
		return v, validate(rs, b)
	}
	op.handle = func(ctx context.Context, c *Call, n any) (any, error) { return h(ctx, c, n.(N)) }
	if _, ok := any(new(In)).(Bounded); ok {
		op.bound = func(in any, b Bounds) (any, error) {
			v := in.(In)
			err := any(&v).(Bounded).Bound(b)
			return v, err
		}
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sealed {
		panic("ops: " + spec.Name + " registered after the registry was sealed")
	}
	if _, dup := r.ops[spec.Name]; dup {
		panic("ops: duplicate operation " + spec.Name)
	}
	r.ops[spec.Name] = op
	return op
}

// Seal ends registration: a later Register panics. The daemon's assembly
// seals every registry it builds, and serves only sealed ones.
func (r *Registry) Seal() {
	r.mu.Lock()
	r.sealed = true
	r.mu.Unlock()
}

// disabled is an operation that is not registered because the local user
// has not enabled its capability.
type disabled struct {
	spec   Spec
	enable string
}

// Disable names operations that are not registered because their
// capability is off, with what enables it (a flag or config key): calling
// one answers CAPABILITY_DISABLED saying so, not UNKNOWN_OPERATION. A name
// that is registered (another capability serves it) is left alone. It
// panics on a sealed registry.
func (r *Registry) Disable(specs []Spec, enable string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sealed {
		panic("ops: Disable on a sealed registry")
	}
	if r.off == nil {
		r.off = make(map[string]disabled)
	}
	for _, s := range specs {
		if _, served := r.ops[s.Name]; served {
			continue
		}
		r.off[s.Name] = disabled{spec: s, enable: enable}
	}
}

// unknown is the error for a call of name that transport t cannot make:
// CAPABILITY_DISABLED naming what enables it, for an operation of a
// capability that is off (Disable), else UNKNOWN_OPERATION.
func (r *Registry) unknown(t audit.Transport, name string) error {
	r.mu.RLock()
	d, off := r.off[name]
	r.mu.RUnlock()
	if off && d.spec.Offered(t) {
		return errcode.New(errcode.CapabilityDisabled, "%s is part of the %s capability, which is disabled on this computer: %s", name, d.spec.Capability, d.enable).
			With("capability", string(d.spec.Capability))
	}
	return errcode.New(errcode.UnknownOperation, "no operation named %q", textsafe.Clip(name, 64))
}

// Disabled reports whether name is an operation of a disabled capability
// that transport t would be offered (see Disable).
func (r *Registry) Disabled(t audit.Transport, name string) bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	d, off := r.off[name]
	return off && d.spec.Offered(t)
}

// Sealed reports whether Seal was called.
func (r *Registry) Sealed() bool {
	r.mu.RLock()
	defer r.mu.RUnlock()
	return r.sealed
}

// Lookup returns the named operation, whatever transport may call it.
func (r *Registry) Lookup(name string) (*Op, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	op, ok := r.ops[name]
	return op, ok
}

// LookupFor returns the named operation if transport t may call it.
func (r *Registry) LookupFor(t audit.Transport, name string) (*Op, bool) {
	op, ok := r.Lookup(name)
	if !ok || !op.Offered(t) {
		return nil, false
	}
	return op, true
}

// Ops returns every operation, sorted by name.
func (r *Registry) Ops() []*Op {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*Op, 0, len(r.ops))
	for _, op := range r.ops {
		out = append(out, op)
	}
	slices.SortFunc(out, func(a, b *Op) int { return strings.Compare(a.Name, b.Name) })
	return out
}

// OpsFor returns the operations transport t may call, sorted by name.
func (r *Registry) OpsFor(t audit.Transport) []*Op {
	return slices.DeleteFunc(r.Ops(), func(op *Op) bool { return !op.Offered(t) })
}

// Call runs the named operation with JSON arguments for a caller. The result
// is the handler's typed response; the error, if any, is an *errcode.Error.
// Exactly one audit record is written for every call, refused or not, before
// the result is returned; if the audit log cannot take it, the call is
// refused before it runs, or its result withheld if the log fails during
// the call.
func (r *Registry) Call(ctx context.Context, caller Caller, name string, args []byte, progress ProgressFunc) (any, error) {
	return r.call(ctx, caller, name, func(op *Op) (any, error) { return op.decode(args) }, progress)
}

// CallValue is Call with a request the transport built itself, of the
// operation's request type: validated against the same schema, but not
// decoded again.
func (r *Registry) CallValue(ctx context.Context, caller Caller, name string, in any, progress ProgressFunc) (any, error) {
	return r.call(ctx, caller, name, func(op *Op) (any, error) { return op.check(in) }, progress)
}

func (r *Registry) call(ctx context.Context, caller Caller, name string, decode func(*Op) (any, error), progress ProgressFunc) (any, error) {
	if r.running != nil {
		defer r.running()()
	}
	start := time.Now()
	c := &Call{Caller: caller, progress: progress}
	if err := r.audit.Check(); err != nil {
		return nil, retry(errcode.New(errcode.AuditUnavailable, "the audit log cannot be written; operation refused"))
	}
	var (
		out any
		err error
	)
	op, ok := r.LookupFor(caller.Transport, name)
	switch {
	case !ok:
		err = r.unknown(caller.Transport, name)
	case caller.Child && !op.AgentSafe():
		err = errcode.New(errcode.UserOnly, "%s is the local user's alone, and this caller is a process hostlink started (a command, an agent or a helper, or one of theirs), which acts for an agent", name)
	default:
		out, err = r.run(ctx, c, op, decode)
	}
	if err != nil {
		if !Retryable(err) {
			err = errcode.As(err)
			logInternal(name, caller, err)
		}
		out = nil
	}
	rec := c.record(name, start, err)
	// A read-only operation's record need not be on disk before its
	// result is (see audit's "Durability"); every other one must.
	rec.Deferred = ok && op.ReadOnly
	if aerr := r.audit.Append(rec); aerr != nil {
		return nil, retry(errcode.New(errcode.AuditUnavailable, "the audit log cannot be written; result withheld"))
	}
	if err == nil && r.results != nil {
		r.results(caller, name, out)
	}
	return out, err
}

// run decodes, judges, budgets and runs one call.
func (r *Registry) run(ctx context.Context, c *Call, op *Op, decode func(*Op) (any, error)) (any, error) {
	in, err := decode(op)
	if err != nil {
		return nil, err
	}
	c.ask(in)
	// A connection's bounds apply before anything is asked or done.
	if op.bound != nil && c.Bounds != (Bounds{}) {
		if in, err = op.bound(in, c.Bounds); err != nil {
			return nil, err
		}
	}
	n := in
	if op.normalize != nil {
		n, err = op.normalize(in)
		if t, ok := n.(Targeted); ok {
			c.target(t.AuditTarget())
		}
		if err != nil {
			return nil, err
		}
	}
	if r.policy != nil {
		if err := r.policy.Allow(ctx, c, op, in, n); err != nil {
			return nil, err
		}
	}
	if op.Budget.binds(c.Caller) {
		release, err := r.budgets.take(op.Budget)
		if err != nil {
			return nil, retry(errcode.As(err))
		}
		defer release()
	}
	out, err := op.handle(ctx, c, n)
	if err != nil {
		return nil, err
	}
	if err := CheckImages(out); err != nil {
		return nil, err
	}
	return out, checkResultBounds(out, c.Bounds)
}

// Refuse records a request that a transport refused before it reached an
// operation (an unknown message type, a capability not granted, a
// concurrency cap) as the registry records a call: name is what was asked
// for, details small facts about it. It returns err as the caller should
// answer it, or AUDIT_UNAVAILABLE when the record cannot be written.
func (r *Registry) Refuse(caller Caller, name string, err error, details map[string]any) error {
	if aerr := r.Record(caller, name, err, details); aerr != nil {
		return aerr
	}
	return err
}

// Record writes one audit record, in the call records' form, for what a
// transport did without running an operation: a refusal (outcome is its
// error), a reply replayed from a transport's own store, an event of the
// transport's life. Nothing ran, so the record need not be synced before
// the caller hears back. The error is AUDIT_UNAVAILABLE when the record
// cannot be written.
func (r *Registry) Record(caller Caller, name string, outcome error, details map[string]any) error {
	c := &Call{Caller: caller}
	for k, v := range details {
		c.Detail(k, v)
	}
	rec := c.record(name, time.Now(), outcome)
	rec.Duration = 0
	rec.Deferred = true
	if err := r.audit.Append(rec); err != nil {
		return retry(errcode.New(errcode.AuditUnavailable, "the audit log cannot be written"))
	}
	return nil
}

// logInternal puts the cause of an INTERNAL_ERROR in the daemon's log,
// the one place it may go: the caller and the audit record see only
// "internal error", since an untyped error's text may name paths or
// values the caller must not learn. (The log redacts secret-looking
// attributes and values.)
func logInternal(op string, caller Caller, err error) {
	e := errcode.As(err)
	if e.Code != errcode.Internal || e.Unwrap() == nil {
		return
	}
	slog.Error("operation failed with an untyped error", "op", op, "transport", string(caller.Transport), "cause", e.Unwrap().Error())
}
