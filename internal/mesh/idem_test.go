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

// TestIdempotentMutation: a write resent with its idempotency key (its
// reply was lost) gets the recorded outcome and does not run again; the
// key with another request is refused; a read is not recorded.
func TestIdempotentMutation(t *testing.T) {
	f := newFixture(t, daemontest.AllowAll, []policy.Class{policy.FilesRead, policy.FilesWrite})
	c := ctx(t)
	target := filepath.Join(f.home, "w", "g.txt")
	write := []byte(`{"path":"g.txt","content":"one"}`)
	if _, err := f.client.Call(c, f.ex.Key(), "write_file", write, "k1"); err != nil {
		t.Fatal(err)
	}
	// Changed since by someone else: a second run would overwrite it.
	os.WriteFile(target, []byte("changed"), 0o644)
	if _, err := f.client.Call(c, f.ex.Key(), "write_file", write, "k1"); err != nil {
		t.Fatalf("resend: %v", err)
	}
	if b, _ := os.ReadFile(target); string(b) != "changed" {
		t.Fatalf("the resend ran again: %q", b)
	}
	_, err := f.client.Call(c, f.ex.Key(), "write_file", []byte(`{"path":"g.txt","content":"two"}`), "k1")
	if errcode.CodeOf(err) != mesh.CodeIdempotencyConflict {
		t.Fatalf("another request under k1: %v", err)
	}
	// A recorded failure is replayed as the failure.
	bad := []byte(`{"path":"../x","content":"x"}`)
	for i := 0; i < 2; i++ {
		if _, err := f.client.Call(c, f.ex.Key(), "write_file", bad, "k2"); errcode.CodeOf(err) != errcode.PathOutsideRoot {
			t.Fatalf("failure %d: %v", i, err)
		}
	}
	lines, _ := audit.Tail(f.d.Dirs.Audit, 50)
	var got []string
	for _, l := range lines {
		if l.Op == "write_file" {
			got = append(got, l.Code+replayMark(l.Details))
		}
	}
	want := "OK OK(replay) IDEMPOTENCY_KEY_REUSED PATH_OUTSIDE_ALLOWED_ROOT PATH_OUTSIDE_ALLOWED_ROOT(replay)"
	if strings.Join(got, " ") != want {
		t.Fatalf("audited %v, want %s", got, want)
	}
}

func replayMark(d map[string]any) string {
	if d["idempotency_replay"] == true {
		return "(replay)"
	}
	return ""
}

// TestOutcomeUnknownAfterRestart: a mutation that was running when
// hostlink stopped is never run again; its resend is told the outcome
// is unknown.
func TestOutcomeUnknownAfterRestart(t *testing.T) {
	path := filepath.Join(t.TempDir(), "mesh.db")
	s, err := mesh.OpenIdemStore(path)
	if err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	block := make(chan struct{})
	go s.Do("c", "k", "write_file", "h", func() ([]byte, error) {
		close(started)
		<-block
		return []byte("{}"), nil
	})
	<-started
	// A second store on the file stands for the restarted hostlink.
	s2, err := mesh.OpenIdemStore(path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	ran := false
	_, replayed, err := s2.Do("c", "k", "write_file", "h", func() ([]byte, error) { ran = true; return nil, nil })
	if ran || !replayed || errcode.CodeOf(err) != mesh.CodeIdempotencyUnknown {
		t.Fatalf("ran %v, replayed %v, err %v", ran, replayed, err)
	}
	close(block)
	s.Close()
}
