package link_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/devplatform"
	"github.com/hostlink/hostlink/internal/link"
)

// TestNegotiatedLimitsAreTheRegistrys: max_file_size_bytes is applied by
// the registry, like every limit: a read or write past it is refused
// before anything is read, written or put to the user (on the default
// policy for files, where writes ask), and the audit records the refusal as the
// operation's own.
func TestNegotiatedLimitsAreTheRegistrys(t *testing.T) {
	root := t.TempDir()
	os.WriteFile(filepath.Join(root, "eight.txt"), []byte("12345678"), 0o600)
	os.WriteFile(filepath.Join(root, "nine.txt"), []byte("123456789"), 0o600)
	f := newFixtureConfig(t, devplatform.Config{MaxFileSizeBytes: 8}, "[policy]\nplatform_folders = \"allow\"\n", func(o *link.Options) {
		o.Session, o.LegacyRoot = "lim", root
	})
	data := f.peer(t, "lim", time.Time{})
	for _, tt := range []struct {
		typ     string
		payload map[string]any
		want    string // reply type, or the error code
	}{
		{"FILE_READ", map[string]any{"path": "eight.txt"}, "FILE_CONTENTS"},
		{"FILE_READ", map[string]any{"path": "nine.txt"}, "FILE_TOO_LARGE"},
		{"FILE_READ", map[string]any{"path": "nine.txt", "length": 8}, "FILE_CONTENTS"},
		{"FILE_READ", map[string]any{"path": "nine.txt", "length": 9}, "FILE_TOO_LARGE"},
		{"FILE_WRITE", map[string]any{"path": "new.txt", "content": "123456789"}, "FILE_TOO_LARGE"},
		{"FILE_WRITE", map[string]any{"path": "new.txt", "content": "MTIzNDU2Nzg5", "encoding": "base64"}, "FILE_TOO_LARGE"},
		// The encoding is checked once, by the operation's schema.
		{"FILE_WRITE", map[string]any{"path": "new.txt", "content": "1", "encoding": "latin1"}, "INVALID_ARGUMENT"},
		{"FILE_READ", map[string]any{"path": "eight.txt", "encoding": "latin1"}, "INVALID_ARGUMENT"},
	} {
		typ, m := send(t, data, tt.typ, tt.payload)
		details, _ := m["details"].(map[string]any)
		if typ != tt.want && (typ != "ERROR" || m["code"] != tt.want && details["hostlink_code"] != tt.want) {
			t.Errorf("%s %v: %s %v, want %s", tt.typ, tt.payload, typ, m, tt.want)
		}
	}
	if _, err := os.Lstat(filepath.Join(root, "new.txt")); !os.IsNotExist(err) {
		t.Errorf("a refused write left a file: %v", err)
	}
	if p := f.d.Approvals().List(false); len(p) != 0 {
		t.Errorf("writes past the limit were put to the user: %+v", p)
	}
	lines, err := audit.Tail(f.d.Dirs.Audit, 100)
	if err != nil {
		t.Fatal(err)
	}
	count := map[string]int{}
	for _, l := range lines {
		if l.Transport == audit.Link && l.Peer == "platform session lim" {
			count[l.Op+" "+l.Code]++
		}
	}
	if count["read_file FILE_TOO_LARGE"] != 2 || count["write_file FILE_TOO_LARGE"] != 2 || count["read_file OK"] != 2 {
		t.Errorf("audit: %v", count)
	}
}
