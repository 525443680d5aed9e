package credstore

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sync"

	"golang.org/x/crypto/argon2"
	"golang.org/x/crypto/chacha20poly1305"

	"github.com/hostlink/hostlink/internal/private"
)

// kdfParams are Argon2id's cost parameters. The defaults are RFC 9106's
// second recommended option (64 MiB, 3 passes); they are stored in the file
// so they can be raised later without breaking existing files.
type kdfParams struct {
	Time    uint32 `json:"t"`
	MemKiB  uint32 `json:"m"`
	Threads uint8  `json:"p"`
}

var defaultKDF = kdfParams{Time: 3, MemKiB: 64 << 10, Threads: 4}

// fileFormat is tokens.enc: a JSON envelope around one sealed JSON object
// mapping names to secrets. Everything but the ciphertext is bound to it as
// additional data, so changing the parameters or salt fails to open.
type fileFormat struct {
	Version int       `json:"v"`
	KDF     string    `json:"kdf"`
	Params  kdfParams `json:"params"`
	Salt    []byte    `json:"salt"`
	Nonce   []byte    `json:"nonce"`
	Sealed  []byte    `json:"sealed"`
}

// ErrBadPassphrase is returned when tokens.enc does not open with the
// passphrase given (or was altered).
var ErrBadPassphrase = errors.New(FileName + " does not open with " + PassphraseEnv + " (wrong passphrase, or the file was altered)")

// encFile is the encrypted fallback. The derived key is cached for the
// file's salt, so only the first access pays for Argon2id.
type encFile struct {
	path string
	pass []byte

	mu   sync.Mutex
	salt []byte
	key  []byte
}

func newEncFile(path string, pass []byte) *encFile { return &encFile{path: path, pass: pass} }

func (f *encFile) keyFor(p kdfParams, salt []byte) []byte {
	if f.key != nil && string(f.salt) == string(salt) {
		return f.key
	}
	f.salt = salt
	f.key = argon2.IDKey(f.pass, salt, p.Time, p.MemKiB, p.Threads, chacha20poly1305.KeySize)
	return f.key
}

func additionalData(ff *fileFormat) []byte {
	ad, _ := json.Marshal(struct {
		V      int       `json:"v"`
		KDF    string    `json:"kdf"`
		Params kdfParams `json:"params"`
		Salt   []byte    `json:"salt"`
	}{ff.Version, ff.KDF, ff.Params, ff.Salt})
	return ad
}

// load returns the file's secrets and header; a missing file is empty.
func (f *encFile) load() (map[string][]byte, *fileFormat, error) {
	b, err := os.ReadFile(f.path)
	if errors.Is(err, fs.ErrNotExist) {
		return map[string][]byte{}, nil, nil
	}
	if err != nil {
		return nil, nil, err
	}
	var ff fileFormat
	if err := json.Unmarshal(b, &ff); err != nil || ff.Version != 1 || ff.KDF != "argon2id" || len(ff.Salt) < 16 {
		return nil, nil, fmt.Errorf("%s is not a hostlink credential file", f.path)
	}
	if ff.Params.Time == 0 || ff.Params.MemKiB == 0 || ff.Params.Threads == 0 || ff.Params.MemKiB > 4<<20 || ff.Params.Time > 100 {
		return nil, nil, fmt.Errorf("%s: implausible key derivation parameters", f.path)
	}
	aead, err := chacha20poly1305.NewX(f.keyFor(ff.Params, ff.Salt))
	if err != nil {
		return nil, nil, err
	}
	if len(ff.Nonce) != aead.NonceSize() {
		return nil, nil, ErrBadPassphrase
	}
	plain, err := aead.Open(nil, ff.Nonce, ff.Sealed, additionalData(&ff))
	if err != nil {
		return nil, nil, ErrBadPassphrase
	}
	m := map[string][]byte{}
	if err := json.Unmarshal(plain, &m); err != nil {
		return nil, nil, fmt.Errorf("%s: %w", f.path, err)
	}
	return m, &ff, nil
}

// save seals m with a fresh nonce (and, for a new file, a fresh salt) and
// replaces the file atomically, private to the user.
func (f *encFile) save(m map[string][]byte, prev *fileFormat) error {
	ff := fileFormat{Version: 1, KDF: "argon2id", Params: defaultKDF}
	if prev != nil {
		ff.Params, ff.Salt = prev.Params, prev.Salt
	} else {
		ff.Salt = make([]byte, 16)
		rand.Read(ff.Salt)
	}
	aead, err := chacha20poly1305.NewX(f.keyFor(ff.Params, ff.Salt))
	if err != nil {
		return err
	}
	plain, err := json.Marshal(m)
	if err != nil {
		return err
	}
	ff.Nonce = make([]byte, aead.NonceSize())
	rand.Read(ff.Nonce)
	ff.Sealed = aead.Seal(nil, ff.Nonce, plain, additionalData(&ff))
	clear(plain)
	b, err := json.Marshal(&ff)
	if err != nil {
		return err
	}
	if err := private.MkdirAll(filepath.Dir(f.path)); err != nil {
		return err
	}
	return private.WriteFile(f.path, b)
}

func (f *encFile) get(name string) ([]byte, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, _, err := f.load()
	if err != nil {
		return nil, err
	}
	v, ok := m[name]
	if !ok {
		return nil, ErrNotFound
	}
	return v, nil
}

func (f *encFile) set(name string, secret []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, prev, err := f.load()
	if err != nil {
		return err
	}
	m[name] = secret
	return f.save(m, prev)
}

// delete removes name, and the whole file once it holds nothing.
func (f *encFile) delete(name string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	m, prev, err := f.load()
	if err != nil {
		return err
	}
	if _, ok := m[name]; !ok {
		return nil
	}
	delete(m, name)
	if len(m) == 0 {
		err := os.Remove(f.path)
		if errors.Is(err, fs.ErrNotExist) {
			return nil
		}
		return err
	}
	return f.save(m, prev)
}
