package rootgrant

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/errcode"
)

var (
	secret      = bytes.Repeat([]byte{7}, 32)
	otherSecret = bytes.Repeat([]byte{8}, 32)
	t0          = time.Unix(1_800_000_000, 0)
)

func signer(t *testing.T, secret []byte, machine string, now *time.Time) *Signer {
	t.Helper()
	s, err := NewSigner(secret, machine, Options{TTL: time.Hour, Now: func() time.Time { return *now }})
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestNewSigner(t *testing.T) {
	if _, err := NewSigner(secret[:31], "m", Options{}); err == nil {
		t.Error("a 31-byte secret was accepted")
	}
	if _, err := NewSigner(secret, "", Options{}); err == nil {
		t.Error("an empty machine id was accepted")
	}
	s, err := NewSigner(secret, "m", Options{})
	if err != nil || s.ttl != DefaultTTL {
		t.Errorf("NewSigner defaults: %v, ttl %v", err, s.ttl)
	}
}

func TestAttachRestore(t *testing.T) {
	_, sub, file, link := tree(t)
	now := t0
	s := signer(t, secret, "machine-1", &now)

	a, err := s.Attach("sess-1", sub, 3)
	if err != nil {
		t.Fatal(err)
	}
	if a.SessionID != "sess-1" || a.AllowedRoot != sub || a.Revision != 3 || len(a.Fingerprint) != 64 || !strings.HasPrefix(a.RootGrant, "v1.") {
		t.Fatalf("Attach = %+v", a)
	}
	g, err := s.Verify(a.RootGrant, "sess-1")
	if err != nil {
		t.Fatal(err)
	}
	want := Grant{MachineID: "machine-1", SessionID: "sess-1", Root: sub, Fingerprint: a.Fingerprint, Revision: 3, IssuedAt: t0, ExpiresAt: t0.Add(time.Hour)}
	if g != want {
		t.Errorf("Verify = %+v, want %+v", g, want)
	}
	r, err := s.Restore(RestoreRequest{SessionID: "sess-1", RootGrant: a.RootGrant})
	if err != nil || r != a {
		t.Errorf("Restore = %+v, %v; want %+v", r, err, a)
	}

	for _, tt := range []struct {
		name, sess, dir string
		rev             int64
		code            errcode.Code
	}{
		{"file", "s", file, 1, DirectoryUnavailable},
		{"symlink (or, without symlinks, an empty path)", "s", link, 1, DirectoryUnavailable},
		{"zero revision", "s", sub, 0, errcode.InvalidArgument},
		{"bad session id", "a/b", sub, 1, errcode.InvalidArgument},
	} {
		if _, err := s.Attach(tt.sess, tt.dir, tt.rev); errcode.CodeOf(err) != tt.code {
			t.Errorf("Attach %s: %v, want %s", tt.name, err, tt.code)
		}
	}
}

// reseal re-signs token's claims after edit, with s's key: what an attacker
// holding the key could do, used to reach the checks behind the HMAC.
func reseal(t *testing.T, s *Signer, token string, edit func(*claims)) string {
	t.Helper()
	parts := strings.Split(token, ".")
	raw, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		t.Fatal(err)
	}
	var c claims
	if err := json.Unmarshal(raw, &c); err != nil {
		t.Fatal(err)
	}
	edit(&c)
	raw, _ = json.Marshal(c)
	return sealRaw(s, raw)
}

// sealRaw signs arbitrary claim bytes with s's key.
func sealRaw(s *Signer, raw []byte) string {
	signed := "v1." + base64.RawURLEncoding.EncodeToString(raw)
	return signed + "." + base64.RawURLEncoding.EncodeToString(s.mac(signed))
}

func TestVerifyRefuses(t *testing.T) {
	_, sub, _, _ := tree(t)
	now := t0
	s := signer(t, secret, "machine-1", &now)
	a, err := s.Attach("sess-1", sub, 1)
	if err != nil {
		t.Fatal(err)
	}
	tok := a.RootGrant
	parts := strings.Split(tok, ".")
	flip := func(s string) string {
		b := []byte(s)
		if b[5] == 'A' {
			b[5] = 'B'
		} else {
			b[5] = 'A'
		}
		return string(b)
	}

	tests := []struct {
		name    string
		token   string
		session string
		signer  *Signer
	}{
		{"empty", "", "sess-1", s},
		{"garbage", "not a token", "sess-1", s},
		{"other version", "v2." + parts[1] + "." + parts[2], "sess-1", s},
		{"extra part", tok + ".x", "sess-1", s},
		{"padded signature", tok + "=", "sess-1", s},
		{"claims edited", "v1." + flip(parts[1]) + "." + parts[2], "sess-1", s},
		{"signature edited", "v1." + parts[1] + "." + flip(parts[2]), "sess-1", s},
		{"signature dropped", "v1." + parts[1] + ".", "sess-1", s},
		{"other session", tok, "sess-2", s},
		{"other machine", tok, "sess-1", signer(t, secret, "machine-2", &now)},
		{"other secret", tok, "sess-1", signer(t, otherSecret, "machine-1", &now)},
		{"too long", "v1." + strings.Repeat("A", MaxGrantLen), "sess-1", s},
		{"claims not JSON", sealRaw(s, []byte("not json")), "sess-1", s},
		{"claims null", sealRaw(s, []byte("null")), "sess-1", s},
		{"claims trailing data", sealRaw(s, append(mustClaims(t, tok), " {}"...)), "sess-1", s},
		{"root not canonical", reseal(t, s, tok, func(c *claims) { c.Root = c.Root + string(os.PathSeparator) + "." }), "sess-1", s},
		{"fingerprint edited", reseal(t, s, tok, func(c *claims) { c.Fingerprint = strings.Repeat("0", 64) }), "sess-1", s},
		{"short fingerprint", reseal(t, s, tok, func(c *claims) { c.Fingerprint = "abc" }), "sess-1", s},
		{"zero revision", reseal(t, s, tok, func(c *claims) { c.Revision = 0 }), "sess-1", s},
		{"issued in the future", reseal(t, s, tok, func(c *claims) { c.IssuedAt = t0.Add(time.Hour).Unix(); c.ExpiresAt = t0.Add(2 * time.Hour).Unix() }), "sess-1", s},
		{"expiry before issue", reseal(t, s, tok, func(c *claims) { c.ExpiresAt = c.IssuedAt - 1 }), "sess-1", s},
	}
	for _, tt := range tests {
		if _, err := tt.signer.Verify(tt.token, tt.session); errcode.CodeOf(err) != GrantInvalid {
			t.Errorf("%s: Verify = %v, want %s", tt.name, err, GrantInvalid)
		}
	}

	// Unknown claim fields are refused: the format is ours alone.
	raw, _ := json.Marshal(map[string]any{"mid": "machine-1", "sid": "sess-1", "root": sub, "fp": a.Fingerprint, "rev": 1, "iat": t0.Unix(), "exp": t0.Add(time.Hour).Unix(), "admin": true})
	if _, err := s.Verify(sealRaw(s, raw), "sess-1"); errcode.CodeOf(err) != GrantInvalid {
		t.Errorf("unknown claim: Verify = %v, want %s", err, GrantInvalid)
	}
	// The claims as issued, re-sealed unchanged, pass: the cases above fail
	// for their edits, not for the re-sealing.
	if _, err := s.Verify(sealRaw(s, mustClaims(t, tok)), "sess-1"); err != nil {
		t.Errorf("re-sealed original claims: %v", err)
	}

	// Expiry, at and after the instant.
	now = t0.Add(time.Hour)
	if _, err := s.Verify(tok, "sess-1"); errcode.CodeOf(err) != GrantInvalid {
		t.Errorf("expired: Verify = %v, want %s", err, GrantInvalid)
	}
	now = t0.Add(time.Hour - time.Second)
	if _, err := s.Verify(tok, "sess-1"); err != nil {
		t.Errorf("a second before expiry: %v", err)
	}
}

func TestVerifyCurrentDirectory(t *testing.T) {
	_, sub, _, _ := tree(t)
	now := t0
	s := signer(t, secret, "machine-1", &now)
	a, err := s.Attach("sess-1", sub, 1)
	if err != nil {
		t.Fatal(err)
	}

	// Replaced by another directory at the same path: refused as a stale
	// grant.
	if err := os.Rename(sub, sub+".old"); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(sub, 0o755); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Verify(a.RootGrant, "sess-1"); errcode.CodeOf(err) != GrantInvalid {
		t.Errorf("replaced directory: Verify = %v, want %s", err, GrantInvalid)
	}

	// Gone: the directory is unavailable.
	if err := os.Remove(sub); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Verify(a.RootGrant, "sess-1"); errcode.CodeOf(err) != DirectoryUnavailable {
		t.Errorf("removed directory: Verify = %v, want %s", err, DirectoryUnavailable)
	}

	// Replaced by a link to the original directory: refused too.
	if symlink(t, sub+".old", sub) {
		if _, err := s.Verify(a.RootGrant, "sess-1"); errcode.CodeOf(err) != DirectoryUnavailable {
			t.Errorf("link in place of the directory: Verify = %v, want %s", err, DirectoryUnavailable)
		}
		if err := os.Remove(sub); err != nil {
			t.Fatal(err)
		}
	}

	// The original, moved back, is accepted again.
	if err := os.Rename(sub+".old", sub); err != nil {
		t.Fatal(err)
	}
	if _, err := s.Verify(a.RootGrant, "sess-1"); err != nil {
		t.Errorf("original directory restored: %v", err)
	}
}

func mustClaims(t *testing.T, token string) []byte {
	t.Helper()
	raw, err := base64.RawURLEncoding.DecodeString(strings.Split(token, ".")[1])
	if err != nil {
		t.Fatal(err)
	}
	return raw
}
