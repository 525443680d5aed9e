package mesh

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"github.com/nats-io/nkeys"

	"github.com/hostlink/hostlink/internal/approvals"
	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
	"github.com/hostlink/hostlink/internal/textsafe"
)

// ServiceVersion is the micro service's version: the mesh protocol's,
// not hostlink's (which the metadata carries).
const ServiceVersion = "1.0.0"

// Machine describes an executor to discovery.
type Machine struct {
	Key     string            `json:"machine"` // the machine key
	Name    string            `json:"name"`
	OS      string            `json:"os"`
	Arch    string            `json:"arch"`
	Version string            `json:"version"` // hostlink's
	Labels  map[string]string `json:"labels,omitempty"`
	// Classes are the policy classes the machine offers over the mesh;
	// Capabilities the capabilities of the operations it serves.
	Classes      []string `json:"classes"`
	Capabilities []string `json:"capabilities"`
	MaxPayload   int64    `json:"max_payload"`
}

// ExecutorOptions configure an executor.
type ExecutorOptions struct {
	Dial
	Machine  Machine       // Key, MaxPayload, Classes and Capabilities are filled in
	Registry *ops.Registry // the registry served, transport mesh
	// Classes are the classes callers over the mesh may use at all (the
	// machine's [mesh] classes).
	Classes []policy.Class
	// Callers returns the callers the local user enrolled, by key.
	Callers func() map[string]Caller
	// MaxConcurrent bounds the mesh calls running at once (default 16);
	// past it a call is refused as busy.
	MaxConcurrent int
	// Idempotency, if set, records the outcome of mutations that carry
	// an idempotency key.
	Idempotency *IdemStore
	// Approval, if set, describes a pending approval by id (what it
	// asks, until when); with PublishApprovals its notice goes to the
	// hub's bucket ([mesh] publish_approvals).
	Approval         func(id string) (summary string, deadline time.Time, ok bool)
	PublishApprovals bool
	// AuditDir, if set, is the audit log whose records are exported to
	// the hub's stream ([mesh] export_audit); ExportState is the file
	// where the exporter keeps its place.
	AuditDir, ExportState string
	// ExportPoll is how often the exporter looks for new records
	// (default 200 ms).
	ExportPoll time.Duration
	// StateDir and Decide, if set, let approvers the local user paired
	// decide this machine's approvals (see PairOp): StateDir holds the
	// enrolment and the open pairing, and Decide decides approval id as
	// by.
	StateDir string
	Decide   func(id string, approve bool, by string) (any, error)
}

// Executor serves a registry on the mesh.
type Executor struct {
	o        ExecutorOptions
	key      string
	kp       nkeys.KeyPair
	nc       *nats.Conn
	svc      micro.Service
	verifier *Verifier
	sem      chan struct{}
	ctx      context.Context
	stop     context.CancelFunc
	running  sync.WaitGroup
	// stopExport ends the audit exporter, if one runs.
	stopExport func()
	approvers  *approvers // nil unless approvers may decide here
	log        *slog.Logger
}

// StartExecutor connects to the bus and serves o.Registry on the
// machine's subjects until Close. The connection is retried for ever in
// the background: a bus that is down at start is not an error.
func StartExecutor(o ExecutorOptions) (*Executor, error) {
	kp, err := o.Creds.KeyPair()
	if err != nil {
		return nil, errors.New("mesh: the machine's seed is not an NKey seed")
	}
	key, _ := kp.PublicKey()
	if o.MaxConcurrent <= 0 {
		o.MaxConcurrent = 16
	}
	if o.Log == nil {
		o.Log = slog.Default()
	}
	if o.Name == "" {
		o.Name = "hostlink " + o.Machine.Name
	}
	e := &Executor{o: o, key: key, kp: kp, sem: make(chan struct{}, o.MaxConcurrent), log: o.Log,
		verifier: &Verifier{Machine: key, Callers: o.Callers}}
	e.ctx, e.stop = context.WithCancel(context.Background())
	if o.StateDir != "" && o.Decide != nil {
		e.approvers = &approvers{stateDir: o.StateDir, decide: o.Decide,
			verifier: &Verifier{Machine: key, Callers: Trusted(o.StateDir, true)},
			pairing:  &Verifier{Machine: key, Callers: func() map[string]Caller { return nil }, AnyCaller: true}}
	}
	nc, err := o.connect()
	if err != nil {
		return nil, fmt.Errorf("mesh: %w", err)
	}
	e.nc = nc
	m := e.describe(nc.MaxPayload())
	meta, err := m.metadata(kp)
	if err != nil {
		nc.Close()
		return nil, err
	}
	svc, err := micro.AddService(nc, micro.Config{
		Name:        ServiceName,
		Version:     ServiceVersion,
		Description: "hostlink executor " + m.Name,
		Metadata:    meta,
		// One executor per subject: no queue group to share.
		QueueGroupDisabled: true,
	})
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("mesh: %w", err)
	}
	// One endpoint for every operation: the operation is the subject's
	// last token, so that one the machine does not serve is answered
	// (UNKNOWN_OPERATION, CLASS_NOT_OFFERED) and audited, not left
	// without a responder.
	err = svc.AddEndpoint("call", micro.HandlerFunc(e.handle), micro.WithEndpointSubject(MachineSubjects(key)))
	if err != nil {
		svc.Stop()
		nc.Close()
		return nil, fmt.Errorf("mesh: %w", err)
	}
	e.svc = svc
	if o.AuditDir != "" {
		poll := o.ExportPoll
		if poll <= 0 {
			poll = 200 * time.Millisecond
		}
		x := &exporter{nc: nc, kp: kp, key: key, dir: o.AuditDir, state: o.ExportState, poll: poll,
			onError: func(err error) { o.Log.Warn("mesh: the audit export waits", "err", err) }}
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan struct{})
		go func() {
			defer close(done)
			x.run(ctx)
		}()
		e.stopExport = func() { stop(); <-done }
	}
	// The server knows of the subscriptions once this returns (when
	// connected): a call right after start finds the executor.
	nc.Flush()
	return e, nil
}

// Key is the machine key.
func (e *Executor) Key() string { return e.key }

// Connected reports whether the executor is connected to the bus now,
// and to which server.
func (e *Executor) Connected() (bool, string) {
	return e.nc.IsConnected(), e.nc.ConnectedUrlRedacted()
}

// Close stops serving, waits for the calls in flight and disconnects.
func (e *Executor) Close() {
	e.svc.Stop()
	// The server has dropped the subscriptions once this returns: a call
	// after Close is EXECUTOR_OFFLINE at once, not sent to a closing
	// connection to time out.
	e.nc.Flush()
	e.running.Wait()
	e.stop()
	if e.stopExport != nil {
		e.stopExport()
	}
	e.nc.Close()
}

// describe is the machine as discovery shows it.
func (e *Executor) describe(maxPayload int64) Machine {
	m := e.o.Machine
	m.Key, m.MaxPayload = e.key, maxPayload
	m.Classes = nil
	for _, c := range e.o.Classes {
		m.Classes = append(m.Classes, string(c))
	}
	caps := map[string]bool{}
	for _, op := range e.o.Registry.OpsFor(audit.Mesh) {
		if slices.Contains(e.o.Classes, op.Class) {
			caps[string(op.Capability)] = true
		}
	}
	m.Capabilities = nil
	for c := range caps {
		m.Capabilities = append(m.Capabilities, c)
	}
	sort.Strings(m.Capabilities)
	return m
}

// handle takes a request off the subscription and runs it in its own
// goroutine, so that a call waiting for an approval holds up no other.
func (e *Executor) handle(req micro.Request) {
	op, _ := OpOf(e.key, req.Subject())
	select {
	case e.sem <- struct{}{}:
	default:
		err := errcode.New(CodeBusy, "this machine runs %d mesh calls already; retry later", cap(e.sem))
		e.respond(req, nil, e.o.Registry.Refuse(ops.Caller{Transport: audit.Mesh, Peer: "(not verified)"}, op, err, nil), false)
		return
	}
	e.running.Add(1)
	go func() {
		defer e.running.Done()
		defer func() { <-e.sem }()
		e.serve(op, req)
	}()
}

// serve verifies a request's assertion and runs it through the registry.
func (e *Executor) serve(op string, req micro.Request) {
	if op == PairOp || op == DecideOp {
		e.serveApprover(op, req)
		return
	}
	body := req.Data()
	claims, who, err := e.verifier.Verify(req.Headers().Get(AssertionHeader), op, body)
	caller := ops.Caller{Transport: audit.Mesh, Peer: peer(who, claims), RequestID: claims.Nonce,
		Classes: e.o.Classes, Bounds: ops.Bounds{MaxContentBytes: contentBound(e.nc.MaxPayload())}}
	if err != nil {
		details := map[string]any{}
		if claims.Caller != "" {
			details["caller"] = claims.Caller
		}
		e.respond(req, nil, e.o.Registry.Refuse(caller, op, err, details), false)
		return
	}
	run := func() ([]byte, error) {
		out, err := e.o.Registry.Call(e.ctx, caller, op, body, nil)
		if err != nil {
			return nil, err
		}
		return encodeResult(out)
	}
	if claims.Idempotency != "" && e.o.Idempotency != nil && !readOnly(e.o.Registry, op) {
		ran := false
		res, replayed, err := e.o.Idempotency.Do(claims.Caller, claims.Idempotency, op, claims.Request, func() ([]byte, error) {
			ran = true
			return run()
		})
		if !ran {
			// A replay, or a refusal by the store, is audited like the
			// link's: nothing ran (again).
			if aerr := e.o.Registry.Record(caller, op, err, map[string]any{"idempotency_key": claims.Idempotency, "idempotency_replay": replayed}); aerr != nil {
				res, err = nil, aerr
			}
		}
		e.respond(req, res, e.pending(op, err), replayed)
		return
	}
	res, err := run()
	e.respond(req, res, e.pending(op, err), false)
}

// pending says where an APPROVAL_PENDING is decided (on this machine, by
// its user), and publishes its notice where the machine allows.
func (e *Executor) pending(op string, err error) error {
	ee := errcode.As(err)
	if err == nil || ee.Code != approvals.CodePending {
		return err
	}
	id, _ := ee.Details["approval_id"].(string)
	where := fmt.Sprintf("on machine %s (%s): its user approves with `hostlink approvals approve %s` or in its web console", e.o.Machine.Name, e.key, id)
	ee = ee.With("machine", e.key).With("decide_on", where)
	if e.o.PublishApprovals && e.o.Approval != nil && id != "" {
		if summary, deadline, ok := e.o.Approval(id); ok {
			n := ApprovalNotice{Machine: e.key, Name: e.o.Machine.Name, ID: id, Op: op, Summary: summary, Expires: deadline, DecideOn: where}
			ctx, cancel := context.WithTimeout(e.ctx, 2*time.Second)
			if perr := publishNotice(ctx, e.nc, n); perr != nil {
				e.log.Warn("mesh: an approval notice was not published", "approval", id, "err", perr)
			}
			cancel()
		}
	}
	return ee
}

// serveApprover answers an approver's pairing or decision.
func (e *Executor) serveApprover(op string, req micro.Request) {
	reg := e.o.Registry
	a := e.approvers
	if a == nil {
		err := errcode.New(errcode.UnknownOperation, "this machine takes no decisions over the mesh")
		e.respond(req, nil, reg.Refuse(ops.Caller{Transport: audit.Mesh, Peer: "(not verified)"}, op, err, nil), false)
		return
	}
	v := a.verifier
	if op == PairOp {
		v = a.pairing
	}
	body := req.Data()
	claims, who, err := v.Verify(req.Headers().Get(AssertionHeader), op, body)
	caller := ops.Caller{Transport: audit.Mesh, Peer: approverPeer(who), RequestID: claims.Nonce}
	if err != nil {
		if errcode.CodeOf(err) == CodeCallerUnknown {
			err = errcode.New(CodeCallerUnknown, "key %s is not an approver of this machine: its user pairs approvers with `hostlink mesh approver pair`", claims.Caller)
		}
		e.respond(req, nil, reg.Refuse(caller, op, err, map[string]any{"approver": claims.Caller}), false)
		return
	}
	if op == PairOp {
		who, err = a.pair(claims.Caller, body)
		if err == nil {
			caller.Peer = approverPeer(who)
		}
		if aerr := reg.Record(caller, "approver_paired", err, map[string]any{"approver": claims.Caller}); aerr != nil {
			err = aerr
		}
		res, _ := json.Marshal(who)
		e.respond(req, res, err, false)
		return
	}
	var d DecideRequest
	if err := json.Unmarshal(body, &d); err != nil || d.ApprovalID == "" {
		e.respond(req, nil, reg.Refuse(caller, op, errcode.New(errcode.InvalidArgument, "a decision names its approval_id"), nil), false)
		return
	}
	// The broker records the decision (approval_decided, transport mesh,
	// by the approver), as it does the console's.
	out, err := a.decide(d.ApprovalID, d.Approve, approverPeer(who))
	if err != nil {
		e.respond(req, nil, reg.Refuse(caller, op, err, map[string]any{"approval_id": d.ApprovalID}), false)
		return
	}
	res, err := encodeResult(out)
	e.respond(req, res, err, false)
}

// readOnly reports whether op is an operation that changes nothing: its
// repetition is harmless, so it is not recorded for idempotency.
func readOnly(reg *ops.Registry, op string) bool {
	o, ok := reg.LookupFor(audit.Mesh, op)
	return ok && o.ReadOnly
}

// peer is how the audit log and approvals name a caller: its enrolled
// name and key (the key is what an approval is bound to), after the
// client it acts for, as that client named itself: "claude-code 2.1.197
// (gateway UAB…)", as a local MCP session's is "claude-code 2.1.197
// (127.0.0.1:50628)".
func peer(who Caller, c Claims) string {
	switch {
	case who.Key != "" && c.Client != "":
		return textsafe.Clip(textsafe.Line(c.Client), 100) + " (" + who.Name + " " + who.Key + ")"
	case who.Key != "":
		return who.Name + " " + who.Key
	case c.Caller != "":
		return "unverified " + c.Caller
	}
	return "(not verified)"
}

// replyOverhead is room in a payload for the reply's envelope.
const replyOverhead = 4 << 10

// contentBound is the most content a call may carry or return within a
// payload of max bytes: JSON strings of base64 grow 4/3, and escapes may
// grow text further, which the reply's own check catches.
func contentBound(max int64) int64 {
	if max <= 2*replyOverhead {
		return 1
	}
	return (max - replyOverhead) / 4 * 3
}

// respond sends the reply, refusing one over the bus's maximum payload
// with the limit rather than failing silently.
func (e *Executor) respond(req micro.Request, result []byte, err error, replayed bool) {
	var b []byte
	if err == nil {
		b = make([]byte, 0, len(result)+32)
		b = append(b, `{"result":`...)
		b = append(b, result...)
		if replayed {
			b = append(b, `,"replayed":true`...)
		}
		b = append(b, '}')
	} else {
		b = encodeReply(nil, err, replayed)
	}
	if max := e.nc.MaxPayload(); int64(len(b)) > max {
		b = encodeReply(nil, errcode.New(CodePayloadTooLarge, "the result is %d bytes, over the bus's maximum payload of %d: ask for less (a range, fewer entries)", len(b), max).
			With("max_payload", max), false)
	}
	if rerr := req.Respond(b); rerr != nil && !errors.Is(rerr, nats.ErrConnectionClosed) {
		e.log.Warn("mesh: a reply was not sent", "err", rerr)
	}
}

// metadata is m as micro service metadata, signed by the machine's key
// so that a gateway can tell a machine's own card from another's claim.
func (m Machine) metadata(kp nkeys.KeyPair) (map[string]string, error) {
	b, err := json.Marshal(m)
	if err != nil {
		return nil, err
	}
	sig, err := kp.Sign(b)
	if err != nil {
		return nil, err
	}
	return map[string]string{"card": string(b), "sig": encodeSig(sig)}, nil
}

// machineFromMetadata checks a card's signature against the key it names
// and returns the machine.
func machineFromMetadata(meta map[string]string) (Machine, error) {
	var m Machine
	card := meta["card"]
	if err := json.Unmarshal([]byte(card), &m); err != nil {
		return m, errors.New("no machine card")
	}
	if !ValidMachine(m.Key) {
		return m, errors.New("no machine key")
	}
	pub, err := nkeys.FromPublicKey(m.Key)
	if err != nil {
		return m, err
	}
	sig, err := decodeSig(meta["sig"])
	if err != nil || pub.Verify([]byte(card), sig) != nil {
		return m, errors.New("the card is not signed by its machine")
	}
	return m, nil
}

// Matches reports whether m has every label of sel ("k=v,k2=v2"; "" is
// every machine).
func (m Machine) Matches(sel map[string]string) bool {
	for k, v := range sel {
		if m.Labels[k] != v {
			return false
		}
	}
	return true
}

// ParseSelector parses "k=v,k2=v2".
func ParseSelector(s string) (map[string]string, error) {
	out := map[string]string{}
	for _, part := range strings.Split(s, ",") {
		part = strings.TrimSpace(part)
		if part == "" {
			continue
		}
		k, v, ok := strings.Cut(part, "=")
		if !ok || k == "" {
			return nil, errcode.New(errcode.InvalidArgument, "label selector %q: want key=value[,key=value]", s)
		}
		out[strings.TrimSpace(k)] = strings.TrimSpace(v)
	}
	return out, nil
}
