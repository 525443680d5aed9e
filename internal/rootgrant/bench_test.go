package rootgrant

import (
	"bytes"
	"path/filepath"
	"testing"
)

// BenchmarkVerify checks a grant end to end: MAC, claims, and the
// directory's current identity.
func BenchmarkVerify(b *testing.B) {
	dir, _ := filepath.EvalSymlinks(b.TempDir())
	s, err := NewSigner(bytes.Repeat([]byte{3}, 32), "m", Options{})
	if err != nil {
		b.Fatal(err)
	}
	a, err := s.Attach("s", dir, 1)
	if err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		if _, err := s.Verify(a.RootGrant, "s"); err != nil {
			b.Fatal(err)
		}
	}
}
