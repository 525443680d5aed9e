package mesh_test

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/mesh"
	"github.com/hostlink/hostlink/internal/meshhub"
	"github.com/hostlink/hostlink/internal/policy"
)

// TestPayloadLimit: what does not fit the bus's maximum payload (8 MiB on
// the hub) is refused with the limit, never cut or lost: a request before
// it is sent, content past the bound it implies before it is read, and a
// reply that escaping made too large after the call.
func TestPayloadLimit(t *testing.T) {
	f := newFixture(t, "", []policy.Class{policy.FilesRead})
	c := ctx(t)
	w := filepath.Join(f.home, "w")
	os.WriteFile(filepath.Join(w, "small.txt"), bytes.Repeat([]byte("a"), 1<<20), 0o644)
	os.WriteFile(filepath.Join(w, "big.txt"), bytes.Repeat([]byte("a"), 7<<20), 0o644)
	os.WriteFile(filepath.Join(w, "escaped.txt"), bytes.Repeat([]byte{1}, 2<<20), 0o644)
	if _, err := f.client.Call(c, f.ex.Key(), "read_file", []byte(`{"path":"small.txt"}`), ""); err != nil {
		t.Fatalf("1 MiB: %v", err)
	}
	_, err := f.client.Call(c, f.ex.Key(), "read_file", []byte(`{"path":"big.txt"}`), "")
	if e := errcode.As(err); e.Code != errcode.FileTooLarge || e.Details["max_content_bytes"] == nil {
		t.Fatalf("7 MiB: %v", err)
	}
	_, err = f.client.Call(c, f.ex.Key(), "read_file", []byte(`{"path":"escaped.txt"}`), "")
	if e := errcode.As(err); e.Code != mesh.CodePayloadTooLarge || e.Details["max_payload"] != float64(meshhub.DefaultMaxPayload) {
		t.Fatalf("2 MiB that escape to 12: %v", err)
	}
	big := []byte(`{"path":"x","content":"` + strings.Repeat("a", meshhub.DefaultMaxPayload) + `"}`)
	_, err = f.client.Call(c, f.ex.Key(), "write_file", big, "")
	if e := errcode.As(err); e.Code != mesh.CodePayloadTooLarge || e.Details["max_payload"] != int64(meshhub.DefaultMaxPayload) {
		t.Fatalf("an 8 MiB request: %v", err)
	}
}
