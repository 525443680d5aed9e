package rootgrant

import (
	"bytes"
	"crypto/hkdf"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
	"time"

	"github.com/hostlink/hostlink/internal/errcode"
)

// DefaultTTL is how long a grant stays valid when Options.TTL is zero.
// Grants are meant to be durable (a chat can be resumed days later); the
// platform revokes access sooner through its OAuth token.
const DefaultTTL = 30 * 24 * time.Hour

// MinSecretLen is the shortest machine secret NewSigner accepts.
const MinSecretLen = 32

// clockSkew is how far in the future a grant's issue time may lie, for a
// clock stepped back since it was issued.
const clockSkew = 5 * time.Minute

// tokenVersion prefixes every token and is covered by its HMAC.
const tokenVersion = "v1"

// Grant is the content of a root_grant token.
type Grant struct {
	MachineID   string
	SessionID   string
	Root        string
	Fingerprint string
	Revision    int64
	IssuedAt    time.Time
	ExpiresAt   time.Time
}

// claims is a Grant on the wire, inside the token. Times are Unix seconds.
type claims struct {
	MachineID   string `json:"mid"`
	SessionID   string `json:"sid"`
	Root        string `json:"root"`
	Fingerprint string `json:"fp"`
	Revision    int64  `json:"rev"`
	IssuedAt    int64  `json:"iat"`
	ExpiresAt   int64  `json:"exp"`
}

// Options tunes a Signer. The zero value is the production setting.
type Options struct {
	// TTL is a grant's lifetime; zero means DefaultTTL.
	TTL time.Duration
	// Now is the clock; nil means time.Now. Tests set it.
	Now func() time.Time
}

// Signer issues and verifies root grants for one machine.
type Signer struct {
	key       []byte
	machineID string
	ttl       time.Duration
	now       func() time.Time
}

// NewSigner returns a Signer for machineID whose HMAC key is derived with
// HKDF-SHA256 from secret, a machine-only secret of at least MinSecretLen
// bytes. hostlink passes its audit key (audit.LoadOrCreateKey at
// paths.Dirs.AuditKey), which is private to the user and never leaves the
// machine; the derivation gives grants their own key, so a grant's MAC and
// an audit record's MAC can never be swapped for one another.
func NewSigner(secret []byte, machineID string, opts Options) (*Signer, error) {
	if len(secret) < MinSecretLen {
		return nil, errors.New("rootgrant: machine secret is too short")
	}
	if machineID == "" {
		return nil, errors.New("rootgrant: empty machine id")
	}
	key, err := hkdf.Key(sha256.New, secret, nil, "hostlink root_grant v1", sha256.Size)
	if err != nil {
		return nil, err
	}
	s := &Signer{key: key, machineID: machineID, ttl: opts.TTL, now: opts.Now}
	if s.ttl <= 0 {
		s.ttl = DefaultTTL
	}
	if s.now == nil {
		s.now = time.Now
	}
	return s, nil
}

// Attach checks dir (see Check) and returns SESSION_ATTACHED's payload for
// sessionID at revision, with a freshly signed grant. The caller resolves
// dir from a browse reference and owns the session's revision counter.
func (s *Signer) Attach(sessionID, dir string, revision int64) (Attached, error) {
	if err := ValidSessionID(sessionID); err != nil {
		return Attached{}, err
	}
	if revision < 1 {
		return Attached{}, errcode.New(errcode.InvalidArgument, "revision must be a positive integer")
	}
	root, err := Check(dir)
	if err != nil {
		return Attached{}, err
	}
	now := s.now()
	g := Grant{
		MachineID:   s.machineID,
		SessionID:   sessionID,
		Root:        root.Path,
		Fingerprint: root.Fingerprint,
		Revision:    revision,
		IssuedAt:    now,
		ExpiresAt:   now.Add(s.ttl),
	}
	return Attached{
		SessionID:   sessionID,
		AllowedRoot: root.Path,
		Fingerprint: root.Fingerprint,
		Revision:    revision,
		RootGrant:   s.sign(g),
	}, nil
}

// Restore verifies req's grant for req's session (see Verify) and returns
// SESSION_RESTORED's payload: the grant's binding and the grant itself.
func (s *Signer) Restore(req RestoreRequest) (Attached, error) {
	g, err := s.Verify(req.RootGrant, req.SessionID)
	if err != nil {
		return Attached{}, err
	}
	return Attached{
		SessionID:   g.SessionID,
		AllowedRoot: g.Root,
		Fingerprint: g.Fingerprint,
		Revision:    g.Revision,
		RootGrant:   req.RootGrant,
	}, nil
}

// sign encodes and MACs g.
func (s *Signer) sign(g Grant) string {
	c, err := json.Marshal(claims{
		MachineID:   g.MachineID,
		SessionID:   g.SessionID,
		Root:        g.Root,
		Fingerprint: g.Fingerprint,
		Revision:    g.Revision,
		IssuedAt:    g.IssuedAt.Unix(),
		ExpiresAt:   g.ExpiresAt.Unix(),
	})
	if err != nil {
		panic("rootgrant: marshal claims: " + err.Error()) // strings and integers always marshal
	}
	signed := tokenVersion + "." + base64.RawURLEncoding.EncodeToString(c)
	return signed + "." + base64.RawURLEncoding.EncodeToString(s.mac(signed))
}

func (s *Signer) mac(signed string) []byte {
	m := hmac.New(sha256.New, s.key)
	m.Write([]byte(signed))
	return m.Sum(nil)
}

// Verify checks token for sessionID and returns its grant. It checks the
// token's shape and HMAC before reading any claim, then the machine and
// session binding, the expiry, and finally the directory as it is now: a
// plain directory whose canonical path is the granted root and whose
// fingerprint is unchanged. Every failure is ROOT_GRANT_INVALID except a
// directory that is gone or no longer accessible, which is
// DIRECTORY_UNAVAILABLE.
func (s *Signer) Verify(token, sessionID string) (Grant, error) {
	g, err := s.parse(token)
	if err != nil {
		return Grant{}, err
	}
	if g.MachineID != s.machineID {
		return Grant{}, invalid("the grant was issued to another machine")
	}
	if g.SessionID != sessionID {
		return Grant{}, invalid("the grant belongs to another session")
	}
	now := s.now()
	if !now.Before(g.ExpiresAt) {
		return Grant{}, invalid("the grant has expired")
	}
	if g.IssuedAt.After(now.Add(clockSkew)) || !g.IssuedAt.Before(g.ExpiresAt) {
		return Grant{}, invalid("the grant's validity period is inconsistent")
	}
	root, err := Check(g.Root)
	if err != nil {
		return Grant{}, err
	}
	if root.Path != g.Root {
		return Grant{}, invalid("the granted root is no longer a canonical path")
	}
	if !hmac.Equal([]byte(root.Fingerprint), []byte(g.Fingerprint)) {
		return Grant{}, invalid("the granted directory was replaced or changed identity")
	}
	return g, nil
}

// parse splits token, checks its HMAC and decodes its claims.
func (s *Signer) parse(token string) (Grant, error) {
	if token == "" || len(token) > MaxGrantLen {
		return Grant{}, invalid("the grant is missing or too long")
	}
	version, rest, ok := strings.Cut(token, ".")
	if !ok || version != tokenVersion {
		return Grant{}, invalid("the grant has an unknown format")
	}
	body, sig, ok := strings.Cut(rest, ".")
	if !ok || strings.Contains(sig, ".") {
		return Grant{}, invalid("the grant has an unknown format")
	}
	enc := base64.RawURLEncoding.Strict()
	mac, err := enc.DecodeString(sig)
	if err != nil || len(mac) != sha256.Size {
		return Grant{}, invalid("the grant's signature is malformed")
	}
	if !hmac.Equal(mac, s.mac(version+"."+body)) {
		return Grant{}, invalid("the grant's signature does not match")
	}
	raw, err := enc.DecodeString(body)
	if err != nil {
		return Grant{}, invalid("the grant's claims are malformed")
	}
	var c claims
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&c); err != nil || dec.More() {
		return Grant{}, invalid("the grant's claims are malformed")
	}
	if c.MachineID == "" || c.SessionID == "" || c.Root == "" || len(c.Fingerprint) != 2*sha256.Size || c.Revision < 1 {
		return Grant{}, invalid("the grant's claims are incomplete")
	}
	return Grant{
		MachineID:   c.MachineID,
		SessionID:   c.SessionID,
		Root:        c.Root,
		Fingerprint: c.Fingerprint,
		Revision:    c.Revision,
		IssuedAt:    time.Unix(c.IssuedAt, 0),
		ExpiresAt:   time.Unix(c.ExpiresAt, 0),
	}, nil
}
