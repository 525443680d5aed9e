package mesh

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"strings"
	"sync"
	"time"

	"github.com/nats-io/nkeys"

	"github.com/hostlink/hostlink/internal/errcode"
)

// AssertionHeader carries a request's signed assertion. A header is only
// a carrier: the executor believes what the signature proves, never what
// a header (or the bus's own Nats-Request-Info) says.
const AssertionHeader = "Hl-Assertion"

// Assertion lifetimes. A caller signs each request for AssertionLifetime;
// an executor accepts clocks that differ by up to MaxSkew, and refuses an
// assertion meant to live longer than MaxLifetime, which bounds its
// replay cache.
const (
	AssertionLifetime = 30 * time.Second
	MaxSkew           = 30 * time.Second
	MaxLifetime       = 2 * time.Minute
)

// Claims are what a caller asserts about one request.
type Claims struct {
	Caller  string `json:"caller"`  // the caller's public NKey; it signed the assertion
	Machine string `json:"machine"` // the machine key the request is for
	Op      string `json:"op"`
	Request string `json:"req"`   // hex SHA-256 of the request body
	Nonce   string `json:"nonce"` // random, once per request
	Issued  int64  `json:"iat"`   // Unix milliseconds
	Expires int64  `json:"exp"`   // Unix milliseconds
	// Idempotency is the caller's key for a mutation: a resend with the
	// same key gets the recorded outcome instead of running again.
	Idempotency string `json:"idem,omitempty"`
	// Client is who the caller acts for, as that client named itself to
	// it (the gateway: an MCP client's clientInfo name and version). The
	// signature vouches only that the caller heard it: the executor shows
	// it beside the caller's enrolled name and key, never instead.
	Client string `json:"client,omitempty"`
}

// BodyHash is the Request claim of body.
func BodyHash(body []byte) string {
	h := sha256.Sum256(body)
	return hex.EncodeToString(h[:])
}

// NewNonce returns a random nonce.
func NewNonce() string {
	var b [16]byte
	rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// Sign returns the assertion for c signed by kp, whose public key must be
// c.Caller: base64url(claims JSON) "." base64url(Ed25519 signature of the
// first part).
func Sign(kp nkeys.KeyPair, c Claims) (string, error) {
	b, err := json.Marshal(c)
	if err != nil {
		return "", err
	}
	head := base64.RawURLEncoding.EncodeToString(b)
	sig, err := kp.Sign([]byte(head))
	if err != nil {
		return "", err
	}
	return head + "." + base64.RawURLEncoding.EncodeToString(sig), nil
}

// Caller is a caller key the local user enrolled, with the name shown in
// audit records.
type Caller struct {
	Name string `json:"name"`
	Key  string `json:"key"`
}

// Verifier checks assertions on an executor.
type Verifier struct {
	Machine string // this machine's key
	// Callers returns the enrolled callers by key, as they are now.
	Callers func() map[string]Caller
	Now     func() time.Time // default time.Now
	// MaxNonces bounds the replay cache (default 100,000): past it, new
	// assertions are refused as busy until old ones expire.
	MaxNonces int
	// AnyCaller accepts a key no one enrolled (the assertion still proves
	// its holder signed it): for an approver's pairing, whose code is
	// what admits it.
	AnyCaller bool

	mu     sync.Mutex
	nonces map[string]int64 // nonce → the time it may be forgotten (Unix ms)
	pruned int64
}

// Verify checks token for a request of op with body: signed by an
// enrolled caller's key, for this machine, op and body, within its
// lifetime (allowing MaxSkew), and not seen before. It returns the claims
// and the caller.
func (v *Verifier) Verify(token, op string, body []byte) (Claims, Caller, error) {
	var c Claims
	invalid := func(why string) (Claims, Caller, error) {
		return c, Caller{}, errcode.New(CodeAssertionInvalid, "the request's assertion %s", why)
	}
	head, sig, ok := strings.Cut(token, ".")
	if !ok || len(token) > 4096 {
		return invalid("is missing or malformed")
	}
	raw, err := base64.RawURLEncoding.DecodeString(head)
	if err != nil || json.Unmarshal(raw, &c) != nil {
		return invalid("is malformed")
	}
	sigRaw, err := base64.RawURLEncoding.DecodeString(sig)
	if err != nil {
		return invalid("is malformed")
	}
	if !nkeys.IsValidPublicUserKey(c.Caller) {
		return invalid("names no caller key")
	}
	pub, err := nkeys.FromPublicKey(c.Caller)
	if err != nil || pub.Verify([]byte(head), sigRaw) != nil {
		return invalid("is not signed by the key it names")
	}
	who, known := v.Callers()[c.Caller]
	if v.AnyCaller && !known {
		who, known = Caller{Key: c.Caller}, true
	}
	if !known {
		return c, Caller{}, errcode.New(CodeCallerUnknown, "caller %s is not enrolled on this machine: its local user adds callers with `hostlink mesh trust`", c.Caller).
			With("caller", c.Caller)
	}
	switch {
	case c.Machine != v.Machine:
		return invalid("is for another machine")
	case c.Op != op:
		return invalid("is for another operation")
	case c.Request != BodyHash(body):
		return invalid("does not match the request's body")
	case len(c.Nonce) < 16 || len(c.Nonce) > 64:
		return invalid("has no usable nonce")
	case c.Expires <= c.Issued || time.Duration(c.Expires-c.Issued)*time.Millisecond > MaxLifetime:
		return invalid("claims a lifetime over " + MaxLifetime.String())
	case len(c.Idempotency) > 128:
		return invalid("has an idempotency key over 128 bytes")
	}
	now := v.now().UnixMilli()
	skew := MaxSkew.Milliseconds()
	if c.Issued > now+skew || c.Expires < now-skew {
		e := errcode.New(CodeClockSkew, "the request's assertion is valid from %s to %s, and this machine's clock says %s: check both clocks",
			ms(c.Issued), ms(c.Expires), ms(now))
		return c, who, e.With("issued_at", ms(c.Issued)).With("expires_at", ms(c.Expires)).With("executor_time", ms(now))
	}
	if err := v.remember(c.Nonce, c.Expires+skew, now); err != nil {
		return c, who, err
	}
	return c, who, nil
}

func ms(t int64) string { return time.UnixMilli(t).UTC().Format(time.RFC3339Nano) }

func (v *Verifier) now() time.Time {
	if v.Now != nil {
		return v.Now()
	}
	return time.Now()
}

// remember records nonce until forget (Unix ms), refusing one already
// recorded. Nonces whose assertions can no longer verify are dropped, so
// the cache holds at most what arrives within MaxLifetime + MaxSkew.
func (v *Verifier) remember(nonce string, forget, now int64) error {
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.nonces == nil {
		v.nonces = map[string]int64{}
	}
	if _, seen := v.nonces[nonce]; seen {
		return errcode.New(CodeReplay, "this request was seen before: each request carries a new nonce")
	}
	max := v.MaxNonces
	if max <= 0 {
		max = 100_000
	}
	if len(v.nonces) >= max || now-v.pruned > 1000 {
		for n, f := range v.nonces {
			if f < now {
				delete(v.nonces, n)
			}
		}
		v.pruned = now
	}
	if len(v.nonces) >= max {
		return errcode.New(CodeBusy, "too many requests within an assertion's lifetime; retry shortly")
	}
	v.nonces[nonce] = forget
	return nil
}
