package link_test

import (
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/daemon/daemontest"
	"github.com/hostlink/hostlink/internal/devplatform"
	"github.com/hostlink/hostlink/internal/link"
)

// TestErrorVocabulary: a platform that grants hostlink_errors gets
// hostlink's codes; one that does not gets upstream's, with hostlink's in
// details.hostlink_code, on a first reply and on one replayed from the
// idempotency store alike.
func TestErrorVocabulary(t *testing.T) {
	for _, tt := range []struct {
		name     string
		deny     []string
		code     string
		hostlink any
	}{
		{"hostlink's vocabulary", nil, "INVALID_ARGUMENT", nil},
		{"upstream's vocabulary", []string{"hostlink_errors"}, "INTERNAL_ERROR", "INVALID_ARGUMENT"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			root := t.TempDir()
			f := newFixtureConfig(t, devplatform.Config{Deny: tt.deny}, daemontest.AllowAll,
				func(o *link.Options) { o.Session, o.LegacyRoot = "voc", root })
			data := f.peer(t, "voc", time.Time{})
			// Deleting the session root is refused (INVALID_ARGUMENT), and
			// the refusal is recorded under its key.
			for _, what := range []string{"first", "replayed"} {
				typ, got := send(t, data, "FILE_DELETE", map[string]any{"path": ".", "recursive": true, "idempotency_key": "k1"})
				d, _ := got["details"].(map[string]any)
				if typ != "ERROR" || got["code"] != tt.code || d["hostlink_code"] != tt.hostlink {
					t.Fatalf("%s: %s %v, want %s (hostlink_code %v)", what, typ, got, tt.code, tt.hostlink)
				}
			}
			// An upstream code is the same in both.
			typ, got := send(t, data, "FILE_READ", map[string]any{"path": "nothing"})
			if d, _ := got["details"].(map[string]any); typ != "ERROR" || got["code"] != "PATH_NOT_FOUND" || d["hostlink_code"] != nil {
				t.Fatalf("a missing file: %s %v", typ, got)
			}
			// CAPABILITY_NOT_GRANTED names what is needed and what is granted.
			typ, got = send(t, data, "SCREENSHOT_REQUEST", map[string]any{})
			d, _ := got["details"].(map[string]any)
			if typ != "ERROR" || got["code"] != "CAPABILITY_NOT_GRANTED" || d["required_capability"] != "computer_use" || d["granted_capabilities"] == nil {
				t.Fatalf("not granted: %s %v", typ, got)
			}
		})
	}
}
