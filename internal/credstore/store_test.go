package credstore

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// cheapKDF makes Argon2id fast for tests that are not about its cost.
func cheapKDF(t *testing.T) {
	old := defaultKDF
	defaultKDF = kdfParams{Time: 1, MemKiB: 64, Threads: 1}
	t.Cleanup(func() { defaultKDF = old })
}

// deadKeyring is a keychain that never answers, as on a box without one.
type deadKeyring struct{}

var errNoBus = errors.New("no bus")

func (deadKeyring) Get(string, string) (string, error) { return "", errNoBus }
func (deadKeyring) Set(string, string, string) error   { return errNoBus }
func (deadKeyring) Delete(string, string) error        { return errNoBus }

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestOpenChoosesBackend(t *testing.T) {
	cheapKDF(t)
	dir := t.TempDir()
	tests := []struct {
		name    string
		env     map[string]string
		want    Backend
		wantErr string
	}{
		{"no keychain, no passphrase", nil, "", "KEYCHAIN_PASSPHRASE is not set"},
		{"no keychain, passphrase", map[string]string{PassphraseEnv: "correct horse"}, EncryptedFile, ""},
		{"keychain forced but dead", map[string]string{BackendEnv: "keychain", PassphraseEnv: "x"}, "", "not reachable"},
		{"unknown backend", map[string]string{BackendEnv: "plaintext"}, "", "use \"keychain\""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, err := Open(Options{StateDir: dir, Getenv: env(tc.env), Keyring: deadKeyring{}})
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("err = %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if s.Backend() != tc.want {
				t.Fatalf("backend %s, want %s", s.Backend(), tc.want)
			}
			if !strings.Contains(s.Describe(), FileName) {
				t.Fatalf("describe %q", s.Describe())
			}
		})
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("opening wrote files: %v", entries)
	}
}

func TestEncryptedFile(t *testing.T) {
	cheapKDF(t)
	ctx := context.Background()
	dir := t.TempDir()
	open := func(pass string) *Store {
		s, err := Open(Options{StateDir: dir, Getenv: env(map[string]string{PassphraseEnv: pass, BackendEnv: "encrypted-file"})})
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	s := open("correct horse battery staple")
	if _, err := s.Get(ctx, "platform"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("get before set: %v", err)
	}
	secret := []byte("access-token-3f9a1c77e2b84d0aa91f")
	if err := s.Set(ctx, "platform", secret); err != nil {
		t.Fatal(err)
	}
	if err := s.Set(ctx, "other", []byte("second")); err != nil {
		t.Fatal(err)
	}
	path := filepath.Join(dir, FileName)
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Contains(raw, secret) || bytes.Contains(raw, []byte("platform")) {
		t.Fatal("tokens.enc holds a secret or a name in plaintext")
	}
	if fi, _ := os.Stat(path); runtime.GOOS != "windows" && fi.Mode().Perm() != 0o600 {
		t.Fatalf("mode %v", fi.Mode())
	}
	// A new Store (a later process) with the same passphrase reads it back.
	got, err := open("correct horse battery staple").Get(ctx, "platform")
	if err != nil || !bytes.Equal(got, secret) {
		t.Fatalf("reopen: %q %v", got, err)
	}
	if _, err := open("wrong").Get(ctx, "platform"); !errors.Is(err, ErrBadPassphrase) {
		t.Fatalf("wrong passphrase: %v", err)
	}
	// Flip one byte of the sealed data: it must not open.
	tampered := bytes.Replace(raw, []byte(`"sealed":"`), []byte(`"sealed":"A`), 1)
	if err := os.WriteFile(path, tampered, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := open("correct horse battery staple").Get(ctx, "platform"); err == nil {
		t.Fatal("a tampered file opened")
	}
	if err := os.WriteFile(path, raw, 0o600); err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{"platform", "platform", "other"} {
		if err := s.Delete(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(path); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("empty store left %s: %v", FileName, err)
	}
}

func TestEncryptedFileRejectsJunk(t *testing.T) {
	cheapKDF(t)
	dir := t.TempDir()
	for _, junk := range []string{"", "{}", `{"v":1,"kdf":"argon2id","params":{"t":1,"m":99999999,"p":1},"salt":"AAAAAAAAAAAAAAAAAAAAAA=="}`, "plaintext-token"} {
		os.WriteFile(filepath.Join(dir, FileName), []byte(junk), 0o600)
		s, _ := Open(Options{StateDir: dir, Getenv: env(map[string]string{PassphraseEnv: "p", BackendEnv: "encrypted-file"})})
		if _, err := s.Get(context.Background(), "x"); err == nil || errors.Is(err, ErrNotFound) {
			t.Errorf("%q: err = %v", junk, err)
		}
	}
}

func BenchmarkUnlockDefaultKDF(b *testing.B) {
	dir := b.TempDir()
	f := newEncFile(filepath.Join(dir, FileName), []byte("pass"))
	f.set("x", []byte("y"))
	for b.Loop() {
		g := newEncFile(f.path, []byte("pass"))
		if _, err := g.get("x"); err != nil {
			b.Fatal(err)
		}
	}
}
