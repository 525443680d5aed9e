package credstore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// Backend names a credential backend.
type Backend string

const (
	// Keychain is the OS keychain (Keychain Services, Secret Service,
	// Credential Manager).
	Keychain Backend = "keychain"
	// EncryptedFile is tokens.enc in the state directory.
	EncryptedFile Backend = "encrypted-file"
)

// PassphraseEnv names the variable holding the encrypted file's passphrase.
const PassphraseEnv = "KEYCHAIN_PASSPHRASE"

// BackendEnv may name the backend to use ("keychain" or "encrypted-file")
// instead of choosing automatically.
const BackendEnv = "HOSTLINK_CREDENTIAL_BACKEND"

// FileName is the encrypted fallback's file in the state directory.
const FileName = "tokens.enc"

// DefaultService is the keychain service name items are stored under.
const DefaultService = "hostlink"

// probeTimeout bounds the keychain availability check: a Secret Service
// that hangs must not hang hostlink.
const probeTimeout = 5 * time.Second

// ErrNotFound is returned by Get when no credential of that name exists.
var ErrNotFound = errors.New("credential not found")

// ErrUnavailable is wrapped by Open's error when no backend can be used.
var ErrUnavailable = errors.New("no credential store available")

// Keyring is the part of an OS keychain the store uses. The system one is
// go-keyring's; it returns ErrNotFound (translated) for missing items.
type Keyring interface {
	Get(service, user string) (string, error)
	Set(service, user, secret string) error
	Delete(service, user string) error
}

// Options configure Open.
type Options struct {
	// StateDir holds tokens.enc when the keychain is unavailable.
	StateDir string
	// Service is the keychain service name (default DefaultService).
	Service string
	// Getenv reads KEYCHAIN_PASSPHRASE and HOSTLINK_CREDENTIAL_BACKEND
	// (default os.Getenv).
	Getenv func(string) string
	// Keyring is the OS keychain (default: the system's via go-keyring).
	Keyring Keyring
}

// Store reads and writes named secrets in one backend.
type Store struct {
	backend Backend
	detail  string // e.g. "Secret Service", or the file path
	service string
	kr      Keyring
	file    *encFile
}

// Open picks a backend: the OS keychain if it answers, else the encrypted
// file if KEYCHAIN_PASSPHRASE is set, else it fails with instructions.
func Open(o Options) (*Store, error) {
	if o.Service == "" {
		o.Service = DefaultService
	}
	if o.Getenv == nil {
		o.Getenv = os.Getenv
	}
	want := Backend(strings.TrimSpace(o.Getenv(BackendEnv)))
	switch want {
	case "", Keychain, EncryptedFile:
	default:
		return nil, fmt.Errorf("%s=%q: use %q or %q", BackendEnv, want, Keychain, EncryptedFile)
	}
	var kerr error
	if want != EncryptedFile {
		kr := o.Keyring
		if kr == nil {
			kr, kerr = systemKeyring(o.Getenv)
		}
		if kerr == nil {
			kerr = probe(kr, o.Service)
		}
		if kerr == nil {
			return &Store{backend: Keychain, detail: keychainName, service: o.Service, kr: kr}, nil
		}
		if want == Keychain {
			return nil, fmt.Errorf("%w: the OS keychain (%s) is not reachable: %v", ErrUnavailable, keychainName, kerr)
		}
	}
	pass := o.Getenv(PassphraseEnv)
	if pass == "" {
		return nil, fmt.Errorf("%w: %s", ErrUnavailable, instructions(kerr))
	}
	if o.StateDir == "" {
		return nil, errors.New("credential store: no state directory for " + FileName)
	}
	path := filepath.Join(o.StateDir, FileName)
	return &Store{backend: EncryptedFile, detail: path, service: o.Service, file: newEncFile(path, []byte(pass))}, nil
}

// instructions tells a user without a keychain and without a passphrase
// how to get one of them.
func instructions(kerr error) string {
	why := "the OS keychain is not reachable"
	if kerr != nil {
		why += " (" + kerr.Error() + ")"
	}
	return why + ", and " + PassphraseEnv + " is not set. Either start a keychain " +
		"(on Linux: install gnome-keyring or KWallet and run hostlink in a session with a D-Bus session bus), " +
		"or set " + PassphraseEnv + " to a long passphrase to keep tokens in an encrypted file " + FileName +
		" in the state directory; hostlink never stores tokens in plaintext"
}

// probe checks that the keychain answers: reading a missing item must
// report "not found", not an error.
func probe(kr Keyring, service string) error {
	done := make(chan error, 1)
	go func() {
		_, err := kr.Get(service, "probe")
		if errors.Is(err, ErrNotFound) {
			err = nil
		}
		done <- err
	}()
	select {
	case err := <-done:
		return err
	case <-time.After(probeTimeout):
		return errors.New("the keychain did not answer within " + probeTimeout.String())
	}
}

// Backend reports the backend in use.
func (s *Store) Backend() Backend { return s.backend }

// Describe says where credentials are kept, for people.
func (s *Store) Describe() string {
	if s.backend == Keychain {
		return "OS keychain (" + s.detail + ")"
	}
	return "encrypted file " + s.detail + " (XChaCha20-Poly1305, key from " + PassphraseEnv + " via Argon2id)"
}

// Get returns the secret stored under name, or ErrNotFound.
func (s *Store) Get(ctx context.Context, name string) ([]byte, error) {
	if s.file != nil {
		return s.file.get(name)
	}
	v, err := s.kr.Get(s.service, name)
	if err != nil {
		return nil, err
	}
	return []byte(v), nil
}

// Set stores secret under name, replacing any previous value.
func (s *Store) Set(ctx context.Context, name string, secret []byte) error {
	if s.file != nil {
		return s.file.set(name, secret)
	}
	return s.kr.Set(s.service, name, string(secret))
}

// Delete removes name; deleting a missing name is not an error.
func (s *Store) Delete(ctx context.Context, name string) error {
	var err error
	if s.file != nil {
		err = s.file.delete(name)
	} else {
		err = s.kr.Delete(s.service, name)
	}
	if errors.Is(err, ErrNotFound) {
		return nil
	}
	return err
}
