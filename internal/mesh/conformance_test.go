package mesh_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/nats-io/nats.go"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/mesh"
	"github.com/hostlink/hostlink/internal/meshhub/hubtest"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
)

// rawConn connects with creds and reports the bus's asynchronous errors
// (permission violations) on the returned channel.
func rawConn(t *testing.T, h *hubtest.Hub, creds mesh.Creds) (*nats.Conn, chan error) {
	t.Helper()
	errs := make(chan error, 16)
	nc, err := nats.Connect(h.URLs()[0], nats.UserJWTAndSeed(creds.JWT, string(creds.Seed)),
		nats.CustomInboxPrefix(mesh.InboxPrefix(hubtest.Key(creds))),
		nats.ErrorHandler(func(_ *nats.Conn, _ *nats.Subscription, err error) { errs <- err }))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(nc.Close)
	return nc, errs
}

func violation(t *testing.T, errs chan error, what string) {
	t.Helper()
	select {
	case err := <-errs:
		if !errors.Is(err, nats.ErrPermissionViolation) && !strings.Contains(strings.ToLower(err.Error()), "permissions violation") {
			t.Fatalf("%s: %v, want a permissions violation", what, err)
		}
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: the bus allowed it", what)
	}
}

// TestNoMachineReachesAnother: the bus keeps each machine to its own
// subjects (it cannot serve, read or call another machine's, nor forge
// its audit or approval notices), a caller scoped to one machine cannot
// call another, and a caller cannot serve any machine's subjects.
func TestNoMachineReachesAnother(t *testing.T) {
	h := hubtest.Start(t)
	a, b := h.Machine(t, "a"), h.Machine(t, "b")
	bKey := hubtest.Key(b)
	ncA, errsA := rawConn(t, h, a)
	for _, subj := range []string{mesh.MachineSubjects(bKey), mesh.Subject(bKey, "read_file"), mesh.InboxPrefix(bKey) + ".>", ">", "hl.v1.>"} {
		if _, err := ncA.SubscribeSync(subj); err != nil {
			t.Fatal(err)
		}
		ncA.Flush()
		violation(t, errsA, "machine a subscribing to "+subj)
	}
	for _, subj := range []string{mesh.Subject(bKey, "read_file"), mesh.AuditSubject(bKey), "$KV." + mesh.ApprovalsBucket + "." + bKey + ".x"} {
		ncA.Publish(subj, []byte("{}"))
		ncA.Flush()
		violation(t, errsA, "machine a publishing to "+subj)
	}
	scoped := h.Caller(t, "scoped", []string{hubtest.Key(a)})
	ncC, errsC := rawConn(t, h, scoped)
	ncC.Publish(mesh.Subject(bKey, "read_file"), []byte("{}"))
	ncC.Flush()
	violation(t, errsC, "a caller scoped to a calling b")
	gw := h.Caller(t, "gateway", nil)
	ncG, errsG := rawConn(t, h, gw)
	for _, subj := range []string{mesh.MachineSubjects(bKey), "$SRV.INFO.hostlink"} {
		ncG.SubscribeSync(subj)
		ncG.Flush()
		violation(t, errsG, "the gateway subscribing to "+subj)
	}
	ncG.Publish("$KV."+mesh.ApprovalsBucket+"."+bKey+".x", []byte("{}"))
	ncG.Flush()
	violation(t, errsG, "the gateway writing an approval notice")
}

// TestLocalControlsNeverServed: no operation of the local user's
// controls is offered on the mesh, and none is reachable through the
// executor: the gateway cannot list, decide or reload anything.
func TestLocalControlsNeverServed(t *testing.T) {
	f := newFixture(t, "", policy.Classes)
	admin, _ := rawConn(t, f.hub, f.hub.Admin(t))
	c := ctx(t)
	n := 0
	for _, op := range f.d.Registry.Ops() {
		if op.Capability != ops.Local {
			continue
		}
		n++
		if op.Offered(audit.Mesh) {
			t.Errorf("%s is offered on the mesh", op.Name)
		}
		if strings.Contains(op.Name, ".") {
			// Not a single subject token: nothing on the bus can even
			// address it on a machine.
			_, err := admin.RequestWithContext(c, mesh.Subject(f.ex.Key(), op.Name), []byte("{}"))
			if !errors.Is(err, nats.ErrNoResponders) {
				t.Errorf("%s: %v, want no responders", op.Name, err)
			}
			continue
		}
		if _, err := f.client.Call(c, f.ex.Key(), op.Name, []byte("{}"), ""); errcode.CodeOf(err) != errcode.UnknownOperation {
			t.Errorf("%s over the mesh: %v", op.Name, err)
		}
	}
	if n < 5 {
		t.Fatalf("only %d local controls found", n)
	}
}

// TestOfflineAtOnce: a machine with no executor connected is
// EXECUTOR_OFFLINE at once, not a timeout: nothing is queued for it.
func TestOfflineAtOnce(t *testing.T) {
	f := newFixture(t, "", nil)
	absent := hubtest.Key(f.hub.Machine(t, "absent"))
	c, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	_, err := f.client.Call(c, absent, "read_file", []byte(`{"path":"f.txt"}`), "")
	if errcode.CodeOf(err) != mesh.CodeExecutorOffline || c.Err() != nil {
		t.Fatalf("absent machine: %v (ctx %v)", err, c.Err())
	}
	// And an executor that stops is offline from then on.
	f.ex.Close()
	_, err = f.client.Call(c, f.ex.Key(), "read_file", []byte(`{"path":"f.txt"}`), "")
	if errcode.CodeOf(err) != mesh.CodeExecutorOffline {
		t.Fatalf("stopped executor: %v", err)
	}
}

// TestUntrustedCallerRefused: a caller the bus admits but the machine's
// user did not enrol is refused by the executor and audited.
func TestUntrustedCallerRefused(t *testing.T) {
	f := newFixture(t, "", nil)
	other, err := mesh.NewClient(mesh.Dial{Servers: f.hub.URLs(), Creds: f.hub.Caller(t, "other", nil)})
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	_, err = other.Call(ctx(t), f.ex.Key(), "read_file", []byte(`{"path":"f.txt"}`), "")
	if errcode.CodeOf(err) != mesh.CodeCallerUnknown {
		t.Fatalf("untrusted caller: %v", err)
	}
	lines, _ := audit.Tail(f.d.Dirs.Audit, 10)
	last := lines[len(lines)-1]
	if last.Transport != audit.Mesh || last.Code != string(mesh.CodeCallerUnknown) || last.Details["caller"] != other.Key() {
		t.Fatalf("audited as %+v", last.Record)
	}
}
