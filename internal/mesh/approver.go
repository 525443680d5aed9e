package mesh

import (
	"crypto/rand"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/base32"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/private"
)

// Approvers. A machine's user may let someone decide its approvals from
// elsewhere: `hostlink mesh approver pair NAME` on the machine makes a
// one-time code, and `hostlink mesh approver join` on the approver's
// device makes an approver key and sends it, signed, with the code. From
// then on a decision signed with that key (an assertion like a caller's,
// for the machine, PairOp's sibling DecideOp and the decision's body) is
// verified by the machine and decided as by that approver, audited with
// transport mesh. Approver keys are not caller keys: the gateway holds
// none, so it cannot decide.

// The two requests the executor answers itself, beside the registry's
// operations (no operation has these names).
const (
	PairOp   = "mesh_pair_approver"
	DecideOp = "mesh_decide_approval"
)

// Approver errors.
const (
	// CodePairingInvalid: no pairing is open on the machine, or the code
	// is wrong or expired.
	CodePairingInvalid errcode.Code = "PAIRING_INVALID"
)

// PairingFile is the open approver pairing in the state directory.
const PairingFile = "mesh-pairing.json"

// PairingLifetime is how long a pairing code can be used (once).
const PairingLifetime = 10 * time.Minute

// maxPairingAttempts bounds wrong codes before the pairing is closed.
const maxPairingAttempts = 5

type pairing struct {
	Name     string    `json:"name"`
	CodeHash []byte    `json:"code_sha256"`
	Expires  time.Time `json:"expires_at"`
	Attempts int       `json:"attempts"`
}

// OpenPairing makes a pairing code that lets one approver named name
// enrol on the machine whose state is stateDir, for PairingLifetime.
func OpenPairing(stateDir, name string) (string, time.Time, error) {
	var raw [10]byte
	rand.Read(raw[:])
	code := base32.StdEncoding.WithPadding(base32.NoPadding).EncodeToString(raw[:])
	h := sha256.Sum256([]byte(code))
	p := pairing{Name: name, CodeHash: h[:], Expires: time.Now().Add(PairingLifetime)}
	b, _ := json.Marshal(p)
	return code, p.Expires, private.WriteFile(filepath.Join(stateDir, PairingFile), b)
}

// DecideRequest is an approver's decision.
type DecideRequest struct {
	ApprovalID string `json:"approval_id"`
	Approve    bool   `json:"approve"`
}

// PairRequest is an approver's enrolment: the code the machine's user
// gave them (the assertion's key is the approver's).
type PairRequest struct {
	Code string `json:"code"`
}

// approvers handles pairing and decisions on an executor.
type approvers struct {
	stateDir string
	verifier *Verifier // over the enrolled approvers
	pairing  *Verifier // any key: it proves holding the key it names
	decide   func(id string, approve bool, by string) (any, error)
	mu       sync.Mutex
}

// pair enrols the assertion's key as an approver if the code matches the
// open pairing.
func (a *approvers) pair(key string, body []byte) (Caller, error) {
	var req PairRequest
	if err := json.Unmarshal(body, &req); err != nil {
		return Caller{}, errcode.New(errcode.InvalidArgument, "the pairing request does not decode")
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	path := filepath.Join(a.stateDir, PairingFile)
	b, err := os.ReadFile(path)
	var p pairing
	if err != nil || json.Unmarshal(b, &p) != nil || time.Now().After(p.Expires) || p.Attempts >= maxPairingAttempts {
		return Caller{}, errcode.New(CodePairingInvalid, "no approver pairing is open on this machine: its user opens one with `hostlink mesh approver pair NAME`")
	}
	h := sha256.Sum256([]byte(strings.ToUpper(strings.TrimSpace(req.Code))))
	if subtle.ConstantTimeCompare(h[:], p.CodeHash) != 1 {
		p.Attempts++
		nb, _ := json.Marshal(p)
		private.WriteFile(path, nb)
		return Caller{}, errcode.New(CodePairingInvalid, "the pairing code is not the one this machine gave")
	}
	os.Remove(path)
	enr, err := LoadEnrolment(a.stateDir)
	if err != nil {
		return Caller{}, err
	}
	who := Caller{Name: p.Name, Key: key}
	enr.Approvers = append(slices.DeleteFunc(enr.Approvers, func(c Caller) bool { return c.Key == key }), who)
	if err := enr.Save(a.stateDir); err != nil {
		return Caller{}, errors.New("the approver could not be recorded")
	}
	return who, nil
}

// approverPeer is how an approver is named where a decision is recorded.
func approverPeer(c Caller) string { return fmt.Sprintf("approver %s %s", c.Name, c.Key) }
