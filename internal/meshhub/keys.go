package meshhub

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/nats-io/jwt/v2"
	"github.com/nats-io/nkeys"

	"github.com/hostlink/hostlink/internal/credstore"
	"github.com/hostlink/hostlink/internal/mesh"
)

// Keys are the hub's signing keys.
type Keys struct {
	Operator nkeys.KeyPair
	Account  nkeys.KeyPair
	System   nkeys.KeyPair
}

// Credential names in the credential store.
const (
	operatorSeed = "mesh-hub-operator"
	accountSeed  = "mesh-hub-account"
	systemSeed   = "mesh-hub-system"
)

// AccountName is the account every machine and caller belongs to.
const AccountName = "HOSTLINK"

// LoadKeys reads the hub's keys from st, making those missing (the first
// start of a hub).
func LoadKeys(ctx context.Context, st *credstore.Store) (Keys, error) {
	var k Keys
	var err error
	if k.Operator, err = loadOrCreate(ctx, st, operatorSeed, nkeys.CreateOperator); err != nil {
		return k, err
	}
	if k.Account, err = loadOrCreate(ctx, st, accountSeed, nkeys.CreateAccount); err != nil {
		return k, err
	}
	if k.System, err = loadOrCreate(ctx, st, systemSeed, nkeys.CreateAccount); err != nil {
		return k, err
	}
	return k, nil
}

// NewKeys makes fresh keys (tests, and a hub whose keys live elsewhere).
func NewKeys() Keys {
	op, _ := nkeys.CreateOperator()
	acc, _ := nkeys.CreateAccount()
	sys, _ := nkeys.CreateAccount()
	return Keys{Operator: op, Account: acc, System: sys}
}

func loadOrCreate(ctx context.Context, st *credstore.Store, name string, create func() (nkeys.KeyPair, error)) (nkeys.KeyPair, error) {
	seed, err := st.Get(ctx, name)
	if err == nil {
		return nkeys.FromSeed(seed)
	}
	if !errors.Is(err, credstore.ErrNotFound) {
		return nil, fmt.Errorf("hub key %s: %w", name, err)
	}
	kp, err := create()
	if err != nil {
		return nil, err
	}
	seed, _ = kp.Seed()
	if err := st.Set(ctx, name, seed); err != nil {
		return nil, fmt.Errorf("hub key %s: %w", name, err)
	}
	return kp, nil
}

func pub(kp nkeys.KeyPair) string {
	p, _ := kp.PublicKey()
	return p
}

// AccountKey is the account's public key.
func (k Keys) AccountKey() string { return pub(k.Account) }

// OperatorJWT is the operator's self-signed JWT, naming the system
// account.
func (k Keys) OperatorJWT() (*jwt.OperatorClaims, string, error) {
	oc := jwt.NewOperatorClaims(pub(k.Operator))
	oc.Name = "hostlink"
	oc.SystemAccount = pub(k.System)
	s, err := oc.Encode(k.Operator)
	return oc, s, err
}

// AccountJWTs are the account's and the system account's JWTs, signed by
// the operator. The account may use JetStream without limits of its own:
// the streams it needs are bounded where they are made.
func (k Keys) AccountJWTs() (account, system string, err error) {
	ac := jwt.NewAccountClaims(pub(k.Account))
	ac.Name = AccountName
	ac.Limits.JetStreamLimits = jwt.JetStreamLimits{MemoryStorage: -1, DiskStorage: -1, Streams: -1, Consumer: -1}
	if account, err = ac.Encode(k.Operator); err != nil {
		return "", "", err
	}
	sc := jwt.NewAccountClaims(pub(k.System))
	sc.Name = "SYS"
	system, err = sc.Encode(k.Operator)
	return account, system, err
}

// user is a user of the account with permissions p.
func (k Keys) user(key, name string, p jwt.Permissions, tags ...string) (string, error) {
	uc := jwt.NewUserClaims(key)
	uc.Name = name
	uc.IssuerAccount = ""
	uc.Permissions = p
	uc.Tags.Add(tags...)
	return uc.Encode(k.Account)
}

// replyTTL bounds how long a user may answer a request it received.
const replyTTL = 5 * time.Minute

// Machine issues the credentials' JWT of the machine with key: it may
// serve its own operation subjects and answer discovery, publish replies
// (to requests it received, once each), its own audit export and its own
// approval notices, and subscribe to replies to its own requests.
func (k Keys) Machine(key, name string) (string, error) {
	if !mesh.ValidMachine(key) {
		return "", fmt.Errorf("%q is not an NKey user key", key)
	}
	var p jwt.Permissions
	p.Sub.Allow.Add(
		mesh.MachineSubjects(key),
		"$SRV.PING", "$SRV.INFO", "$SRV.STATS",
		"$SRV.*."+mesh.ServiceName, "$SRV.*."+mesh.ServiceName+".*",
		mesh.InboxPrefix(key)+".>",
	)
	p.Pub.Allow.Add(mesh.AuditSubject(key), mesh.ApprovalKeys(key))
	p.Resp = &jwt.ResponsePermission{MaxMsgs: 1, Expires: replyTTL}
	return k.user(key, name, p, "role:machine")
}

// Caller issues the JWT of a caller (a gateway, a person's tool) that may
// call the machines named by key, or every machine when machines is nil,
// discover them and read their approval notices. It cannot subscribe to
// any machine's subjects, nor publish anything but requests.
func (k Keys) Caller(key, name string, machines []string) (string, error) {
	if !mesh.ValidMachine(key) {
		return "", fmt.Errorf("%q is not an NKey user key", key)
	}
	var p jwt.Permissions
	if machines == nil {
		p.Pub.Allow.Add(mesh.Prefix + ".*.*")
	}
	for _, m := range machines {
		p.Pub.Allow.Add(mesh.MachineSubjects(m))
	}
	p.Pub.Allow.Add(
		"$SRV.PING."+mesh.ServiceName, "$SRV.INFO."+mesh.ServiceName,
		"$JS.API.DIRECT.GET.KV_"+mesh.ApprovalsBucket+".>",
		"$JS.API.STREAM.INFO.KV_"+mesh.ApprovalsBucket,
		"$JS.API.CONSUMER.CREATE.KV_"+mesh.ApprovalsBucket+".>",
		"$JS.API.CONSUMER.DELETE.KV_"+mesh.ApprovalsBucket+".>",
	)
	p.Sub.Allow.Add(mesh.InboxPrefix(key) + ".>")
	return k.user(key, name, p, "role:caller")
}

// Admin issues the JWT of the hub's own user: every subject of the
// account. Only the hub process holds it, to make the streams and read
// the aggregated audit.
func (k Keys) Admin(key string) (string, error) {
	var p jwt.Permissions
	p.Pub.Allow.Add(">")
	p.Sub.Allow.Add(">")
	return k.user(key, "hub", p, "role:hub")
}

// NewUser makes a user key pair, returning it with its seed.
func NewUser() (nkeys.KeyPair, []byte, string) {
	kp, _ := nkeys.CreateUser()
	seed, _ := kp.Seed()
	return kp, seed, pub(kp)
}
