package companion

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"

	"github.com/hostlink/hostlink/internal/credstore"
)

// SecretStore is where a companion keeps its credentials: the OS keychain
// or the encrypted file (internal/credstore's Store).
type SecretStore interface {
	Get(ctx context.Context, name string) ([]byte, error)
	Set(ctx context.Context, name string, secret []byte) error
	Delete(ctx context.Context, name string) error
}

// Credentials are the companion's credentials, one per runtime address.
// Keychains cannot list their entries, so an index entry names the
// runtimes paired with, for hostlink unpair to revoke them all.
type Credentials struct{ st SecretStore }

// NewCredentials keeps credentials in st.
func NewCredentials(st SecretStore) *Credentials { return &Credentials{st: st} }

const credentialIndex = "companion:runtimes"

func credentialName(runtime string) string { return "companion:" + runtime }

// Load returns the credential for the runtime at addr, or an error saying
// how to pair.
func (c *Credentials) Load(ctx context.Context, addr string) (Credential, error) {
	var cred Credential
	b, err := c.st.Get(ctx, credentialName(addr))
	if errors.Is(err, credstore.ErrNotFound) {
		return cred, fmt.Errorf("not paired with the runtime at %s: run hostlink companion pair-code there, then hostlink companion pair --runtime %s --code CODE here", addr, addr)
	}
	if err != nil {
		return cred, err
	}
	return cred, json.Unmarshal(b, &cred)
}

// Save keeps cred for the runtime at addr, replacing an older one.
func (c *Credentials) Save(ctx context.Context, addr string, cred Credential) error {
	b, err := json.Marshal(cred)
	if err != nil {
		return err
	}
	if err := c.st.Set(ctx, credentialName(addr), b); err != nil {
		return err
	}
	list, err := c.Runtimes(ctx)
	if err != nil || slices.Contains(list, addr) {
		return err
	}
	return c.setIndex(ctx, append(list, addr))
}

// Delete forgets the credential for the runtime at addr.
func (c *Credentials) Delete(ctx context.Context, addr string) error {
	if err := c.st.Delete(ctx, credentialName(addr)); err != nil && !errors.Is(err, credstore.ErrNotFound) {
		return err
	}
	list, err := c.Runtimes(ctx)
	if err != nil || !slices.Contains(list, addr) {
		return err
	}
	return c.setIndex(ctx, slices.DeleteFunc(list, func(s string) bool { return s == addr }))
}

// Runtimes lists the runtime addresses this companion is paired with.
func (c *Credentials) Runtimes(ctx context.Context) ([]string, error) {
	b, err := c.st.Get(ctx, credentialIndex)
	if errors.Is(err, credstore.ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	var list []string
	if err := json.Unmarshal(b, &list); err != nil {
		return nil, fmt.Errorf("companion credential index: %w", err)
	}
	return list, nil
}

func (c *Credentials) setIndex(ctx context.Context, list []string) error {
	if len(list) == 0 {
		err := c.st.Delete(ctx, credentialIndex)
		if errors.Is(err, credstore.ErrNotFound) {
			return nil
		}
		return err
	}
	b, _ := json.Marshal(list)
	return c.st.Set(ctx, credentialIndex, b)
}

// PairingsExist reports whether this machine has ever been a runtime
// that companions pair with (companions.db in stateDir).
func PairingsExist(stateDir string) bool {
	_, err := os.Stat(filepath.Join(stateDir, pairingsDB))
	return err == nil
}
