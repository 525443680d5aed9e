package link

import (
	"cmp"
	"context"
	"encoding/json"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/link/wire"
	"github.com/hostlink/hostlink/internal/ops"
)

// request is one admitted request being served: its envelope, its route,
// and whether a registry call has recorded it yet.
type request struct {
	e     *wire.Envelope
	route route
	reg   *ops.Registry
	peer  string
	// name is what the audit log records the request as when it is
	// refused before any operation runs: the route's operation, the one
	// OPERATION_CALL names, else the message type.
	name   string
	called bool
	bounds ops.Bounds // the connection's negotiated limits
}

func (c *Client) newRequest(e *wire.Envelope, r route) *request {
	return &request{e: e, route: r, reg: c.Registry, peer: c.peer(), name: cmp.Or(r.op, e.Type), bounds: c.Limits().Bounds()}
}

func (r *request) caller(nested bool) ops.Caller {
	return ops.Caller{Transport: audit.Link, Peer: r.peer, RequestID: r.e.ID, Nested: nested, Bounds: r.bounds}
}

// call runs the route's operation with in, the operation's own request
// type: budgets count it.
func (r *request) call(ctx context.Context, in any) (any, error) {
	return r.callOp(ctx, r.route.op, in)
}

// callOp runs op as this request's operation.
func (r *request) callOp(ctx context.Context, op string, in any) (any, error) {
	r.called = true
	return r.reg.CallValue(ctx, r.caller(false), op, in, nil)
}

// callJSON runs op with JSON arguments (OPERATION_CALL).
func (r *request) callJSON(ctx context.Context, op string, args json.RawMessage) (any, error) {
	r.called = true
	return r.reg.Call(ctx, r.caller(false), op, args, nil)
}

// helper runs op on the way to the request's own operation (listing the
// monitors, observing the screen to place an input): audited and judged
// like any call, but counted against no budget.
func (r *request) helper(ctx context.Context, op string, in any) (any, error) {
	r.called = true
	return r.reg.CallValue(ctx, r.caller(true), op, in, nil)
}

// refuse records the request, refused for err before it reached an
// operation, and returns what to answer.
func (r *request) refuse(err error) error {
	if r.reg == nil {
		return err
	}
	return r.reg.Refuse(r.caller(false), r.name, err, map[string]any{"message_type": r.e.Type})
}

// replayed records a request answered from the idempotency store: the
// first reply again, with its outcome.
func (r *request) replayed(typ string, payload any) error {
	if r.reg == nil {
		return nil
	}
	var outcome error
	if raw, ok := payload.(json.RawMessage); ok && typ == wire.TypeError {
		var p wire.ErrorPayload
		json.Unmarshal(raw, &p)
		outcome = errcode.New(errcode.Code(p.Code), "%s", p.Message)
	}
	return r.reg.Record(r.caller(false), r.name, outcome, map[string]any{"message_type": r.e.Type, "idempotency": "replayed"})
}
