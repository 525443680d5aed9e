package mesh_test

import (
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/nats-io/nkeys"

	"github.com/hostlink/hostlink/internal/approvals"
	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/mesh"
	"github.com/hostlink/hostlink/internal/policy"
)

// TestApproverDecides: an approver the machine's user paired with a
// one-time code decides a pending approval from elsewhere, signed with
// its own key, and the decision is audited as theirs over the mesh; a
// wrong code pairs no one, and the gateway (a trusted caller, not an
// approver) cannot decide.
func TestApproverDecides(t *testing.T) {
	f := newFixture(t, "[policy]\nwait_seconds = 1\n", []policy.Class{policy.FilesRead, policy.FilesWrite})
	c := ctx(t)
	approver, _ := nkeys.CreateUser()
	akey, _ := approver.PublicKey()
	code, _, err := mesh.OpenPairing(f.d.Dirs.State, "ada's phone")
	if err != nil {
		t.Fatal(err)
	}
	_, err = f.client.CallAs(c, approver, f.ex.Key(), mesh.PairOp, []byte(`{"code":"AAAAAAAAAAAAAAAA"}`), "")
	if errcode.CodeOf(err) != mesh.CodePairingInvalid {
		t.Fatalf("a wrong code: %v", err)
	}
	if _, err := f.client.CallAs(c, approver, f.ex.Key(), mesh.PairOp, []byte(`{"code":"`+code+`"}`), ""); err != nil {
		t.Fatalf("pairing: %v", err)
	}
	// Used once.
	other, _ := nkeys.CreateUser()
	if _, err := f.client.CallAs(c, other, f.ex.Key(), mesh.PairOp, []byte(`{"code":"`+code+`"}`), ""); errcode.CodeOf(err) != mesh.CodePairingInvalid {
		t.Fatalf("the code again: %v", err)
	}
	write := []byte(`{"path":"new.txt","content":"decided elsewhere"}`)
	_, err = f.client.Call(c, f.ex.Key(), "write_file", write, "")
	pending := errcode.As(err)
	if pending.Code != approvals.CodePending {
		t.Fatalf("the write: %v", err)
	}
	decision, _ := json.Marshal(mesh.DecideRequest{ApprovalID: pending.Details["approval_id"].(string), Approve: true})
	// The gateway holds no approver key.
	if _, err := f.client.Call(c, f.ex.Key(), mesh.DecideOp, decision, ""); errcode.CodeOf(err) != mesh.CodeCallerUnknown {
		t.Fatalf("the gateway deciding: %v", err)
	}
	if _, err := f.client.CallAs(c, approver, f.ex.Key(), mesh.DecideOp, decision, ""); err != nil {
		t.Fatalf("the approver deciding: %v", err)
	}
	if _, err := f.client.Call(c, f.ex.Key(), "write_file", write, ""); err != nil {
		t.Fatalf("the approved write: %v", err)
	}
	if b, _ := os.ReadFile(filepath.Join(f.home, "w", "new.txt")); string(b) != "decided elsewhere" {
		t.Fatalf("the file: %q", b)
	}
	lines, _ := audit.Tail(f.d.Dirs.Audit, 100)
	found := map[string]bool{}
	for _, l := range lines {
		if l.Transport == audit.Mesh && l.Peer == "approver ada's phone "+akey {
			found[l.Op+":"+l.Code] = true
		}
	}
	if !found["approver_paired:OK"] || !found["approval_decided:OK"] {
		t.Fatalf("audited %v", found)
	}
}
