package rootgrant

import (
	"bytes"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/errcode"
)

// FuzzDecode feeds the session payload decoders and the grant verifier
// arbitrary bytes: none may panic, every failure must carry a typed code,
// and what a decoder accepts must satisfy its own checks.
func FuzzDecode(f *testing.F) {
	for _, s := range []string{
		`{"session_id":"s","browse_id":"b","directory_ref":"r","expected_connection_id":null}`,
		`{"session_id":"s","revision":1}`,
		`{"session_id":"s","root_grant":"v1.eyJtaWQiOiJtIn0.AAAA"}`,
		`{"session_id":"s"}`, `null`, `[]`, `{"session_id":1e400}`, "v1..", "v1.e30.",
	} {
		f.Add([]byte(s))
	}
	s, err := NewSigner(bytes.Repeat([]byte{1}, 32), "m", Options{Now: func() time.Time { return time.Unix(1e9, 0) }})
	if err != nil {
		f.Fatal(err)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		typed := func(err error) {
			if err != nil && errcode.CodeOf(err) == errcode.Internal {
				t.Fatalf("untyped error %v", err)
			}
		}
		a, err := DecodeAttach(data)
		typed(err)
		if err == nil && ValidSessionID(a.SessionID) != nil {
			t.Fatalf("DecodeAttach accepted session %q", a.SessionID)
		}
		r, err := DecodeActivate(data)
		typed(err)
		if err == nil && r.Revision < 1 {
			t.Fatalf("DecodeActivate accepted revision %d", r.Revision)
		}
		_, err = DecodeRestore(data)
		typed(err)
		_, err = DecodeDetach(data)
		typed(err)
		if _, err := s.Verify(string(data), "s"); err == nil || errcode.CodeOf(err) != GrantInvalid {
			t.Fatalf("Verify(%q) = %v, want %s", data, err, GrantInvalid)
		}
	})
}
