package credstore

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"
)

// TestCredentialManager stores, reads and deletes a credential in the real
// Windows Credential Manager (under Wine, its advapi32 implementation).
func TestCredentialManager(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	s, err := Open(Options{StateDir: dir, Service: "hostlink-test", Getenv: func(string) string { return "" }})
	if err != nil {
		t.Fatal(err)
	}
	if s.Backend() != Keychain || !strings.Contains(s.Describe(), "Credential Manager") {
		t.Fatalf("backend %s (%s)", s.Backend(), s.Describe())
	}
	secret := []byte(`{"access_token":"a-win","refresh_token":"r-win"}`)
	if err := s.Set(ctx, "platform", secret); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, "platform")
	if err != nil || !bytes.Equal(got, secret) {
		t.Fatalf("get: %q %v", got, err)
	}
	for range 2 {
		if err := s.Delete(ctx, "platform"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := s.Get(ctx, "platform"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("after delete: %v", err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Fatalf("the keychain backend wrote to the state dir: %v", entries)
	}
}
