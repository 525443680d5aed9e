package mesh_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/daemon/daemontest"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/mesh"
	"github.com/hostlink/hostlink/internal/policy"
)

// TestSlowConsumer: a caller whose bus client drops the replies it could
// not queue (a slow consumer, here a reply larger than the bytes its
// subscription may hold) ends the call waiting for one with
// MESH_SLOW_CONSUMER, not a wait for its deadline or a silent success;
// the edit whose reply was dropped ran once, its resend with the
// idempotency key gets the recorded outcome, and the same caller and
// executor go on serving.
func TestSlowConsumer(t *testing.T) {
	f := newFixture(t, daemontest.AllowAll, []policy.Class{policy.FilesRead, policy.FilesWrite})
	c := ctx(t)
	target := filepath.Join(f.home, "w", "long.txt")
	// One line of 64 KiB: the edit's diff holds it twice.
	line := strings.Repeat("a", 64<<10) + " marker\n"
	os.WriteFile(target, []byte(line), 0o644)
	if err := f.client.SetReplyLimits(0, 16<<10); err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.Call(c, f.ex.Key(), "read_file", []byte(`{"path":"f.txt"}`), ""); err != nil {
		t.Fatalf("a reply within the limit: %v", err)
	}
	edit := []byte(`{"path":"long.txt","edits":[{"old_text":"marker","new_text":"marker marker"}]}`)
	_, err := f.client.Call(c, f.ex.Key(), "edit_file", edit, "e1")
	if e := errcode.As(err); e.Code != mesh.CodeSlowConsumer || e.Details["machine"] != f.ex.Key() {
		t.Fatalf("an edit whose reply is dropped: %v", err)
	}
	if _, err := f.client.Call(c, f.ex.Key(), "read_file", []byte(`{"path":"long.txt"}`), ""); errcode.CodeOf(err) != mesh.CodeSlowConsumer {
		t.Fatalf("a read whose reply is dropped: %v", err)
	}

	// Room again: the resend is answered from the record, and the same
	// connection carries large replies.
	if err := f.client.SetReplyLimits(0, 0); err != nil {
		t.Fatal(err)
	}
	if _, err := f.client.Call(c, f.ex.Key(), "edit_file", edit, "e1"); err != nil {
		t.Fatalf("the resent edit: %v", err)
	}
	if b, _ := os.ReadFile(target); strings.Count(string(b), "marker") != 2 {
		t.Fatalf("the edit ran %d times", strings.Count(string(b), "marker")-1)
	}
	out, err := f.client.Call(c, f.ex.Key(), "read_file", []byte(`{"path":"long.txt"}`), "")
	if err != nil || len(out) < 64<<10 {
		t.Fatalf("a large read after the slow consumer: %d bytes, %v", len(out), err)
	}
	lines, _ := audit.Tail(f.d.Dirs.Audit, 50)
	var got []string
	for _, l := range lines {
		if l.Op == "edit_file" {
			got = append(got, l.Code+replayMark(l.Details))
		}
	}
	if strings.Join(got, ",") != "OK,OK(replay)" {
		t.Fatalf("edit_file records: %v", got)
	}
}
