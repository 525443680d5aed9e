package credstore

import (
	"bytes"
	"context"
	"errors"
	"os"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/credstore/sstest"
)

func startSecretService(t *testing.T) {
	sstest.Start(t, func() error { return probe(osKeyring{}, DefaultService) })
}

func TestSecretService(t *testing.T) {
	startSecretService(t)
	ctx := context.Background()
	dir := t.TempDir()
	// Even with a passphrase set, a reachable keychain wins.
	s, err := Open(Options{StateDir: dir, Service: "hostlink-test", Getenv: env(map[string]string{
		"DBUS_SESSION_BUS_ADDRESS": os.Getenv("DBUS_SESSION_BUS_ADDRESS"), PassphraseEnv: "unused"})})
	if err != nil {
		t.Fatal(err)
	}
	if s.Backend() != Keychain || !strings.Contains(s.Describe(), "Secret Service") {
		t.Fatalf("backend %s (%s)", s.Backend(), s.Describe())
	}
	secret := []byte(`{"access_token":"a-7b1f","refresh_token":"r-99c2"}`)
	if err := s.Set(ctx, "platform", secret); err != nil {
		t.Fatal(err)
	}
	got, err := s.Get(ctx, "platform")
	if err != nil || !bytes.Equal(got, secret) {
		t.Fatalf("get: %q %v", got, err)
	}
	// The same item seen through a second client (another process would
	// do the same): the keychain, not memory, holds it.
	v, err := osKeyring{}.Get("hostlink-test", "platform")
	if err != nil || v != string(secret) {
		t.Fatalf("direct get: %q %v", v, err)
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

func TestNoSessionBus(t *testing.T) {
	_, err := Open(Options{StateDir: t.TempDir(), Getenv: env(nil)})
	if !errors.Is(err, ErrUnavailable) || !strings.Contains(err.Error(), "DBUS_SESSION_BUS_ADDRESS") {
		t.Fatalf("err = %v", err)
	}
}
