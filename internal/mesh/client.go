package mesh

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nats.go"
	"github.com/nats-io/nats.go/micro"
	"github.com/nats-io/nkeys"

	"github.com/hostlink/hostlink/internal/errcode"
)

// Client calls executors: the gateway's side of the mesh, and any tool
// with caller credentials. Each request is signed with the client's key.
type Client struct {
	nc  *nats.Conn
	kp  nkeys.KeyPair
	key string
	// Now is the clock assertions are issued by (default time.Now).
	Now func() time.Time
}

// NewClient connects to the bus as the caller d.Creds names.
func NewClient(d Dial) (*Client, error) {
	kp, err := d.Creds.KeyPair()
	if err != nil {
		return nil, errors.New("mesh: the caller's seed is not an NKey seed")
	}
	key, _ := kp.PublicKey()
	if d.Name == "" {
		d.Name = "hostlink gateway"
	}
	nc, err := d.connect()
	if err != nil {
		return nil, err
	}
	return &Client{nc: nc, kp: kp, key: key}, nil
}

// Key is the caller's public key, which executors enrol.
func (c *Client) Key() string { return c.key }

// Conn is the client's bus connection.
func (c *Client) Conn() *nats.Conn { return c.nc }

// Close disconnects.
func (c *Client) Close() { c.nc.Close() }

func (c *Client) now() time.Time {
	if c.Now != nil {
		return c.Now()
	}
	return time.Now()
}

// Call runs op on machine with args (the operation's JSON arguments) and
// returns its result's JSON; idem, if not empty, is the mutation's
// idempotency key. Failures are typed: EXECUTOR_OFFLINE when no executor
// serves the machine now (at once, nothing is queued), MESH_TIMEOUT at
// ctx's deadline, PAYLOAD_TOO_LARGE over the bus's maximum, and the
// executor's own errors as it sent them.
func (c *Client) Call(ctx context.Context, machine, op string, args []byte, idem string) (json.RawMessage, error) {
	return c.CallAs(ctx, c.kp, machine, op, args, idem)
}

// CallAs is Call with the assertion signed by kp rather than the
// connection's key: an approver's pairing and decisions.
func (c *Client) CallAs(ctx context.Context, kp nkeys.KeyPair, machine, op string, args []byte, idem string) (json.RawMessage, error) {
	if !ValidMachine(machine) {
		return nil, errcode.New(CodeUnknownMachine, "%q is not a machine key", machine)
	}
	if op == "" || len(op) > 64 || strings.ContainsAny(op, ".*> \t\r\n") {
		return nil, errcode.New(errcode.UnknownOperation, "no operation named %q is served on the mesh", op)
	}
	if len(args) == 0 {
		args = []byte("{}")
	}
	max := c.nc.MaxPayload()
	if int64(len(args))+replyOverhead > max && max > 0 {
		return nil, errcode.New(CodePayloadTooLarge, "the request is %d bytes, over the bus's maximum payload of %d", len(args), max).
			With("max_payload", max)
	}
	now := c.now()
	signer, _ := kp.PublicKey()
	tok, err := Sign(kp, Claims{Caller: signer, Machine: machine, Op: op, Request: BodyHash(args), Nonce: NewNonce(),
		Issued: now.UnixMilli(), Expires: now.Add(AssertionLifetime).UnixMilli(), Idempotency: idem})
	if err != nil {
		return nil, err
	}
	msg := nats.NewMsg(Subject(machine, op))
	msg.Header.Set(AssertionHeader, tok)
	msg.Data = args
	resp, err := c.nc.RequestMsgWithContext(ctx, msg)
	if err != nil {
		return nil, busError(err, machine)
	}
	var r Reply
	if err := json.Unmarshal(resp.Data, &r); err != nil {
		return nil, errcode.New(errcode.Internal, "the executor's reply does not decode")
	}
	if r.Error != nil {
		return nil, r.Error
	}
	return r.Result, nil
}

// busError types a request's failure on the bus.
func busError(err error, machine string) error {
	switch {
	case errors.Is(err, nats.ErrNoResponders):
		return errcode.New(CodeExecutorOffline, "machine %s is not connected to the mesh now; nothing was queued", machine).With("machine", machine)
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, nats.ErrTimeout):
		return errcode.New(CodeTimeout, "machine %s did not answer in time; a change it was asked for may or may not have happened: resend it with the same idempotency_key to learn its outcome", machine).With("machine", machine)
	case errors.Is(err, context.Canceled):
		return errcode.New(errcode.Cancelled, "the call was cancelled")
	case errors.Is(err, nats.ErrMaxPayload):
		return errcode.New(CodePayloadTooLarge, "the request is over the bus's maximum payload")
	case errors.Is(err, nats.ErrSlowConsumer):
		return errcode.New(CodeBusy, "the gateway's connection fell behind the bus (slow consumer); retry")
	case errors.Is(err, nats.ErrConnectionClosed), errors.Is(err, nats.ErrDisconnected), errors.Is(err, nats.ErrConnectionReconnecting):
		return errcode.New(CodeUnavailable, "the gateway is not connected to the mesh now")
	}
	return errcode.New(CodeUnavailable, "the mesh request failed: %v", err)
}

// Discovered is a machine discovery found: its card and whether it
// answered just now.
type Discovered struct {
	Machine
	Online bool `json:"online"`
}

// Discover asks every executor for its card ($SRV.INFO.hostlink) and
// collects the answers for up to wait, or until expect machines answered
// (0: wait the whole time). Cards that are not signed by their machine,
// or whose endpoint is not that machine's subject, are dropped: a
// machine may answer for itself only.
func (c *Client) Discover(ctx context.Context, wait time.Duration, expect int) ([]Machine, error) {
	subject, _ := micro.ControlSubject(micro.InfoVerb, ServiceName, "")
	inbox := c.nc.NewRespInbox()
	sub, err := c.nc.SubscribeSync(inbox)
	if err != nil {
		return nil, busError(err, "")
	}
	defer sub.Unsubscribe()
	if err := c.nc.PublishRequest(subject, inbox, nil); err != nil {
		return nil, busError(err, "")
	}
	ctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	seen := map[string]Machine{}
	for expect <= 0 || len(seen) < expect {
		msg, err := sub.NextMsgWithContext(ctx)
		if err != nil {
			break
		}
		var info micro.Info
		if json.Unmarshal(msg.Data, &info) != nil || len(info.Endpoints) != 1 {
			continue
		}
		m, err := machineFromMetadata(info.Metadata)
		if err != nil || info.Endpoints[0].Subject != MachineSubjects(m.Key) {
			continue
		}
		seen[m.Key] = m
	}
	out := make([]Machine, 0, len(seen))
	for _, m := range seen {
		out = append(out, m)
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].Name < out[j].Name || out[i].Name == out[j].Name && out[i].Key < out[j].Key
	})
	return out, nil
}

// Directory remembers the machines discovery found, so that a machine
// that went away is listed offline rather than forgotten, and names
// resolve to keys without asking the bus each time.
type Directory struct {
	Client *Client
	Wait   time.Duration // how long one discovery waits (default 500 ms)

	mu     sync.Mutex
	known  map[string]Machine
	online map[string]bool // as the last discovery found them
	at     time.Time       // when that was
}

// Recent is List, answered from the last discovery when it is younger
// than maxAge: a fan-out need not wait out a discovery of its own each
// time (a machine that went away since answers EXECUTOR_OFFLINE).
func (d *Directory) Recent(ctx context.Context, maxAge time.Duration) ([]Discovered, error) {
	d.mu.Lock()
	fresh := !d.at.IsZero() && time.Since(d.at) < maxAge
	var out []Discovered
	if fresh {
		for _, m := range d.known {
			out = append(out, Discovered{Machine: m, Online: d.online[m.Key]})
		}
	}
	d.mu.Unlock()
	if !fresh {
		return d.List(ctx)
	}
	sortDiscovered(out)
	return out, nil
}

func sortDiscovered(out []Discovered) {
	sort.Slice(out, func(i, j int) bool {
		return out[i].Name < out[j].Name || out[i].Name == out[j].Name && out[i].Key < out[j].Key
	})
}

// List discovers the machines and returns every one known, online or
// not.
func (d *Directory) List(ctx context.Context) ([]Discovered, error) {
	wait := d.Wait
	if wait <= 0 {
		wait = 500 * time.Millisecond
	}
	found, err := d.Client.Discover(ctx, wait, 0)
	if err != nil {
		return nil, err
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if d.known == nil {
		d.known = map[string]Machine{}
	}
	online := map[string]bool{}
	for _, m := range found {
		d.known[m.Key] = m
		online[m.Key] = true
	}
	d.online, d.at = online, time.Now()
	out := make([]Discovered, 0, len(d.known))
	for _, m := range d.known {
		out = append(out, Discovered{Machine: m, Online: online[m.Key]})
	}
	sortDiscovered(out)
	return out, nil
}

// Resolve returns the key of the machine named by nameOrKey: a machine
// key as it is, else the one known machine with that name (discovering
// again when none is known by it).
func (d *Directory) Resolve(ctx context.Context, nameOrKey string) (string, error) {
	if ValidMachine(nameOrKey) {
		return nameOrKey, nil
	}
	for attempt := 0; attempt < 2; attempt++ {
		d.mu.Lock()
		var keys []string
		for _, m := range d.known {
			if m.Name == nameOrKey {
				keys = append(keys, m.Key)
			}
		}
		d.mu.Unlock()
		switch {
		case len(keys) == 1:
			return keys[0], nil
		case len(keys) > 1:
			sort.Strings(keys)
			return "", errcode.New(errcode.InvalidArgument, "%d machines are named %q: name one by its key", len(keys), nameOrKey).With("machines", keys)
		}
		if attempt == 0 {
			if _, err := d.List(ctx); err != nil {
				return "", err
			}
		}
	}
	return "", errcode.New(CodeUnknownMachine, "no machine named %q is known: list_machines shows them", nameOrKey).With("machine", nameOrKey)
}
