package mesh

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"
	"time"

	"github.com/hostlink/hostlink/internal/private"
)

// SeedName is the machine's NKey seed in the credential store, kept
// like the platform token (the OS keychain, else the encrypted file).
const SeedName = "mesh-seed"

// EnrolmentFile is the machine's enrolment in its state directory: the
// public parts only (the JWT, the hub's URLs, the callers the local user
// trusts).
const EnrolmentFile = "mesh.json"

// Enrolment is what `hostlink mesh join` stored and `hostlink mesh
// trust` changes; nothing on the mesh writes it.
type Enrolment struct {
	Key     string            `json:"machine"` // the machine key
	Name    string            `json:"name"`    // as the hub enrolled it
	Servers []string          `json:"servers"`
	JWT     string            `json:"jwt"`
	Labels  map[string]string `json:"labels,omitempty"`
	// Callers are the caller keys whose assertions this machine accepts.
	Callers []Caller `json:"callers"`
	// Approvers are keys whose signed decisions on this machine's
	// approvals it accepts (enrolled with a pairing code).
	Approvers []Caller  `json:"approvers,omitempty"`
	Joined    time.Time `json:"joined"`
}

// ErrNotEnrolled: the machine has not joined a mesh.
var ErrNotEnrolled = errors.New("this machine has not joined a mesh: run `hostlink mesh join URL CODE` with a code from `hostlink hub enrol` on the hub")

// LoadEnrolment reads the enrolment from stateDir.
func LoadEnrolment(stateDir string) (*Enrolment, error) {
	p := filepath.Join(stateDir, EnrolmentFile)
	b, err := os.ReadFile(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, ErrNotEnrolled
	}
	if err != nil {
		return nil, err
	}
	if err := private.Check(p); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	var e Enrolment
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, fmt.Errorf("%s: %w", p, err)
	}
	return &e, nil
}

// Save writes e to stateDir, privately and atomically.
func (e *Enrolment) Save(stateDir string) error {
	b, err := json.MarshalIndent(e, "", "  ")
	if err != nil {
		return err
	}
	if err := private.MkdirAll(stateDir); err != nil {
		return err
	}
	return private.WriteFile(filepath.Join(stateDir, EnrolmentFile), append(b, '\n'))
}

// Trusted returns the callers (or approvers) of the enrolment in
// stateDir by key, as the file says at each call (it is small, and
// parsed again only when its bytes changed), so that `hostlink mesh
// trust` and `untrust` take effect at once, without a restart.
func Trusted(stateDir string, approvers bool) func() map[string]Caller {
	var (
		mu   sync.Mutex
		last []byte
		cur  = map[string]Caller{}
	)
	p := filepath.Join(stateDir, EnrolmentFile)
	return func() map[string]Caller {
		mu.Lock()
		defer mu.Unlock()
		b, err := os.ReadFile(p)
		if err != nil || private.Check(p) != nil {
			// No enrolment, or one others could have written: nobody
			// is trusted.
			last, cur = nil, map[string]Caller{}
			return cur
		}
		if bytes.Equal(b, last) {
			return cur
		}
		var e Enrolment
		next := map[string]Caller{}
		if json.Unmarshal(b, &e) == nil {
			list := e.Callers
			if approvers {
				list = e.Approvers
			}
			for _, c := range list {
				next[c.Key] = c
			}
		}
		last, cur = b, next
		return cur
	}
}
