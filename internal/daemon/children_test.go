package daemon

import (
	"context"
	"slices"
	"testing"

	"github.com/hostlink/hostlink/internal/apitype"
	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
)

// Every method of the control channel that no agent transport offers
// (each that decides, configures or escalates, and the rest of the local
// user's controls) is refused to a caller hostlink started, on the
// daemon's real registry, with every capability on; what agents may call
// stays open to it.
func TestChildrenReachNoLocalControl(t *testing.T) {
	home := t.TempDir()
	t.Setenv("HOSTLINK_HOME", home)
	d, err := Open(Options{EnableShell: true})
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	child := ops.Caller{Transport: audit.IPC, Peer: "uid 1 pid 2 (started by hostlink)", Child: true}
	var userOnly []string
	for _, op := range d.Registry.OpsFor(audit.IPC) {
		if op.AgentSafe() {
			continue
		}
		userOnly = append(userOnly, op.Name)
		if _, err := d.Registry.Call(context.Background(), child, op.Name, []byte(`{}`), nil); errcode.CodeOf(err) != errcode.UserOnly {
			t.Errorf("%s by hostlink's child: %v, want USER_ONLY", op.Name, err)
		}
	}
	for _, m := range []string{apitype.MethodApprovalsDecide, apitype.MethodApprovalsBatch, apitype.MethodGrantsRevoke, apitype.MethodGrantsSave,
		apitype.MethodReload, apitype.MethodStop, apitype.MethodApprovalsList, apitype.MethodStatus} {
		if !slices.Contains(userOnly, m) {
			t.Errorf("%s is offered to agents", m)
		}
	}
	if _, err := d.Registry.Call(context.Background(), child, "list_workdirs", []byte(`{}`), nil); err != nil {
		t.Errorf("list_workdirs, an agent's operation, by hostlink's child: %v", err)
	}
	t.Logf("the user's alone: %v", userOnly)
}
