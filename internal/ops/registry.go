package ops

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"sync"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
)

// Spec declares an operation's identity and behaviour flags.
type Spec struct {
	Name        string // stable name on every transport, e.g. "read_file"
	Title       string
	Description string
	Capability  string // capability it belongs to, e.g. "files"
	ReadOnly    bool   // does not change anything on the host
	Destructive bool   // may delete or overwrite existing data
	Idempotent  bool   // repeating it with the same arguments has no further effect
}

// SpecsFor returns a constructor of Specs for one capability's operations,
// so a package registering several states its capability once.
func SpecsFor(capability string) func(name, title, desc string, readOnly, destructive, idempotent bool) Spec {
	return func(name, title, desc string, readOnly, destructive, idempotent bool) Spec {
		return Spec{Name: name, Title: title, Description: desc, Capability: capability,
			ReadOnly: readOnly, Destructive: destructive, Idempotent: idempotent}
	}
}

// Op is a registered operation.
type Op struct {
	Spec
	InputSchema  *jsonschema.Schema
	OutputSchema *jsonschema.Schema
	// Out is the response type, for adapters that present some responses
	// their own way (mcpserve checks the methods it implements).
	Out reflect.Type

	input  *jsonschema.Resolved
	invoke func(ctx context.Context, c *Call, args []byte) (any, error)
}

// Auditor records one line per call. audit.Log implements it.
type Auditor interface {
	// Check reports whether a record could be written now; a call is
	// refused before it runs when it could not.
	Check() error
	Append(audit.Record) error
}

// Policy decides whether a caller may run an operation, after the request
// is validated and before the handler runs. in is the decoded request (the
// operation's In value), so that a policy can judge the exact action; a
// policy may block (waiting for the user) and must honour ctx.
type Policy interface {
	Allow(ctx context.Context, c *Call, op *Op, in any) error
}

// Registry holds the operations. It is safe for concurrent use once
// registration is done.
type Registry struct {
	mu     sync.RWMutex
	ops    map[string]*Op
	audit  Auditor
	policy Policy
}

// New returns an empty registry that audits through a and asks p (if not
// nil) before running each call.
func New(a Auditor, p Policy) *Registry {
	return &Registry{ops: make(map[string]*Op), audit: a, policy: p}
}

// Handler is an operation's implementation.
type Handler[In, Out any] func(ctx context.Context, c *Call, in In) (Out, error)

// Register adds an operation. It panics on a duplicate name or a type that
// has no JSON schema: both are programming errors found at start-up.
func Register[In, Out any](r *Registry, spec Spec, h Handler[In, Out]) *Op {
	in, err := schemaFor[In]()
	if err != nil {
		panic(fmt.Sprintf("ops: %s input: %v", spec.Name, err))
	}
	out, err := schemaFor[Out]()
	if err != nil {
		panic(fmt.Sprintf("ops: %s output: %v", spec.Name, err))
	}
	resolved, err := in.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("ops: %s input schema: %v", spec.Name, err))
	}
	op := &Op{Spec: spec, InputSchema: in, OutputSchema: out, Out: reflect.TypeFor[Out](), input: resolved}
	op.invoke = func(ctx context.Context, c *Call, args []byte) (any, error) {
		var v In
		if err := decode(resolved, args, &v); err != nil {
			return nil, err
		}
		if r.policy != nil {
			if err := r.policy.Allow(ctx, c, op, v); err != nil {
				return nil, err
			}
		}
		return h(ctx, c, v)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, dup := r.ops[spec.Name]; dup {
		panic("ops: duplicate operation " + spec.Name)
	}
	r.ops[spec.Name] = op
	return op
}

// Lookup returns the named operation.
func (r *Registry) Lookup(name string) (*Op, bool) {
	r.mu.RLock()
	defer r.mu.RUnlock()
	op, ok := r.ops[name]
	return op, ok
}

// Ops returns every operation, sorted by name.
func (r *Registry) Ops() []*Op {
	r.mu.RLock()
	defer r.mu.RUnlock()
	out := make([]*Op, 0, len(r.ops))
	for _, op := range r.ops {
		out = append(out, op)
	}
	slices.SortFunc(out, func(a, b *Op) int {
		if a.Name < b.Name {
			return -1
		}
		if a.Name > b.Name {
			return 1
		}
		return 0
	})
	return out
}

// Call runs the named operation with JSON arguments for a caller. The result
// is the handler's typed response; the error, if any, is an *errcode.Error.
// Exactly one audit record is written for every call, refused or not, before
// the result is returned; if the
// audit log cannot take it, the call is refused before it runs, or its
// result withheld if the log fails during the call.
func (r *Registry) Call(ctx context.Context, caller Caller, name string, args []byte, progress ProgressFunc) (any, error) {
	start := time.Now()
	c := &Call{Caller: caller, progress: progress}
	if err := r.audit.Check(); err != nil {
		return nil, errcode.New(errcode.AuditUnavailable, "the audit log cannot be written; operation refused")
	}
	var (
		out any
		err error
	)
	op, ok := r.Lookup(name)
	if !ok {
		err = errcode.New(errcode.UnknownOperation, "no operation named %q", truncate(name, 64))
	} else {
		out, err = op.invoke(ctx, c, args)
		if err == nil {
			err = CheckImages(out)
		}
	}
	if err != nil {
		err = errcode.As(err)
		out = nil
	}
	rec := c.record(name, start, err)
	// A read-only operation's record need not be on disk before its
	// result is (see audit's "Durability"); every other one must.
	rec.Deferred = ok && op.ReadOnly
	if aerr := r.audit.Append(rec); aerr != nil {
		return nil, errcode.New(errcode.AuditUnavailable, "the audit log cannot be written; result withheld")
	}
	return out, err
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
