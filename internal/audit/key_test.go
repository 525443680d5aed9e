package audit

import (
	"bytes"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/private"
)

func TestLoadOrCreateKey(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new", "dir", "audit.key")
	key, err := LoadOrCreateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(key) != KeySize || bytes.Equal(key, make([]byte, KeySize)) {
		t.Fatalf("key = %x", key)
	}
	again, err := LoadOrCreateKey(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(key, again) {
		t.Error("second LoadOrCreateKey returned a different key")
	}
	other, err := LoadOrCreateKey(filepath.Join(t.TempDir(), "audit.key"))
	if err != nil {
		t.Fatal(err)
	}
	if bytes.Equal(key, other) {
		t.Error("two new keys are equal")
	}
}

func TestLoadOrCreateKeyWrongLength(t *testing.T) {
	for _, n := range []int{0, 16, KeySize - 1, KeySize + 1, 64} {
		path := filepath.Join(t.TempDir(), "audit.key")
		if err := private.WriteFile(path, bytes.Repeat([]byte{1}, n)); err != nil {
			t.Fatal(err)
		}
		if _, err := LoadOrCreateKey(path); err == nil || !strings.Contains(err.Error(), "bytes") {
			t.Errorf("%d-byte key file: err = %v, want a length error", n, err)
		}
	}
}
