package mesh

import (
	"context"
	"encoding/json"
	"errors"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
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

	// Every call's reply comes to replyPrefix.<call id> on one
	// subscription of the client's own rather than nats.go's request
	// mux, so that when the bus client drops replies it could not queue
	// (a slow consumer) the calls waiting then learn it.
	replyPrefix string
	replies     *nats.Subscription
	seq         atomic.Uint64
	mu          sync.Mutex
	waiting     map[string]chan *nats.Msg
}

// dropCheck is how often a waiting call looks whether replies were
// dropped: nats.go reports only the first drop of a run, so the count
// is read rather than waited for.
const dropCheck = 100 * time.Millisecond

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
	c := &Client{kp: kp, key: key, replyPrefix: InboxPrefix(key) + ".r." + nats.NewInbox()[len(nats.InboxPrefix):],
		waiting: map[string]chan *nats.Msg{}}
	nc, err := d.connect()
	if err != nil {
		return nil, err
	}
	c.nc = nc
	if c.replies, err = nc.Subscribe(c.replyPrefix+".*", c.deliver); err != nil {
		nc.Close()
		return nil, busError(err, "")
	}
	return c, nil
}

// SetReplyLimits bounds the replies queued for this client and not yet
// taken by their calls (nats.go's default: 500,000 messages, 64 MiB);
// past either the bus client drops what arrives, and the calls waiting
// then end MESH_SLOW_CONSUMER. Zero or less leaves a bound unlimited.
func (c *Client) SetReplyLimits(msgs, bytes int) error {
	if msgs <= 0 {
		msgs = -1
	}
	if bytes <= 0 {
		bytes = -1
	}
	return c.replies.SetPendingLimits(msgs, bytes)
}

// deliver hands a reply to the call waiting for it.
func (c *Client) deliver(m *nats.Msg) {
	id := strings.TrimPrefix(m.Subject, c.replyPrefix+".")
	c.mu.Lock()
	ch := c.waiting[id]
	delete(c.waiting, id)
	c.mu.Unlock()
	if ch != nil {
		ch <- m // buffered: one reply each
	}
}

type clientKey struct{}

// ForClient returns ctx carrying the name of the client the calls made
// with it act for (an MCP client's "name version"), which executors
// record beside the caller.
func ForClient(ctx context.Context, name string) context.Context {
	return context.WithValue(ctx, clientKey{}, name)
}

// slowError is a call's end when replies were dropped while it waited.
func slowError(machine string) error {
	return errcode.New(CodeSlowConsumer, "this caller fell behind the replies coming to it and the bus client dropped some: the reply from machine %s may be among them, so a change it was asked for may or may not have happened; resend it with the same idempotency_key to learn its outcome, or retry when the caller is less busy", machine).
		With("machine", machine)
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
	client, _ := ctx.Value(clientKey{}).(string)
	tok, err := Sign(kp, Claims{Caller: signer, Machine: machine, Op: op, Request: BodyHash(args), Nonce: NewNonce(),
		Issued: now.UnixMilli(), Expires: now.Add(AssertionLifetime).UnixMilli(), Idempotency: idem, Client: client})
	if err != nil {
		return nil, err
	}
	resp, err := c.request(ctx, machine, op, tok, args)
	if err != nil {
		return nil, err
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

// request sends a signed request and waits for its reply: the reply,
// or EXECUTOR_OFFLINE when nobody serves the subject, MESH_SLOW_CONSUMER
// when replies were dropped while it waited, MESH_TIMEOUT at ctx's end.
func (c *Client) request(ctx context.Context, machine, op, tok string, args []byte) (*nats.Msg, error) {
	id := strconv.FormatUint(c.seq.Add(1), 36)
	ch := make(chan *nats.Msg, 1)
	c.mu.Lock()
	c.waiting[id] = ch
	c.mu.Unlock()
	defer func() {
		c.mu.Lock()
		delete(c.waiting, id)
		c.mu.Unlock()
	}()
	dropped, _ := c.replies.Dropped()
	msg := nats.NewMsg(Subject(machine, op))
	msg.Reply = c.replyPrefix + "." + id
	msg.Header.Set(AssertionHeader, tok)
	msg.Data = args
	if err := c.nc.PublishMsg(msg); err != nil {
		return nil, busError(err, machine)
	}
	tick := time.NewTicker(dropCheck)
	defer tick.Stop()
	for {
		select {
		case m := <-ch:
			// The server answers a request nobody is subscribed to with a
			// status message of its own.
			if len(m.Data) == 0 && m.Header.Get("Status") == "503" {
				return nil, busError(nats.ErrNoResponders, machine)
			}
			return m, nil
		case <-tick.C:
		case <-ctx.Done():
		}
		if n, _ := c.replies.Dropped(); n > dropped {
			return nil, slowError(machine)
		}
		if ctx.Err() != nil {
			return nil, busError(ctx.Err(), machine)
		}
	}
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
		return slowError(machine)
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
