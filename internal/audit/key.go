package audit

import (
	"crypto/rand"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/hostlink/hostlink/internal/private"
)

// KeySize is the length of the audit HMAC key.
const KeySize = 32

// LoadOrCreateKey returns the key stored at path, or creates it: KeySize
// random bytes in a new private file (and its directory, 0700, if
// missing). It refuses a key file that others may read or write (see
// private.Check) or that is not exactly KeySize bytes long.
func LoadOrCreateKey(path string) ([]byte, error) {
	key, err := readKey(path)
	if !errors.Is(err, fs.ErrNotExist) {
		return key, err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("audit: key: %w", err)
	}
	f, err := private.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL)
	if errors.Is(err, fs.ErrExist) {
		return readKey(path) // another process created it first
	}
	if err != nil {
		return nil, fmt.Errorf("audit: key: %w", err)
	}
	key = make([]byte, KeySize)
	rand.Read(key)
	_, err = f.Write(key)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		os.Remove(path)
		return nil, fmt.Errorf("audit: key: %w", err)
	}
	return key, nil
}

func readKey(path string) ([]byte, error) {
	if err := private.Check(path); err != nil {
		return nil, fmt.Errorf("audit: key: %w", err)
	}
	key, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("audit: key: %w", err)
	}
	if len(key) != KeySize {
		return nil, fmt.Errorf("audit: key: %s is %d bytes, want %d", path, len(key), KeySize)
	}
	return key, nil
}
