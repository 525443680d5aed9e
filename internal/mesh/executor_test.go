package mesh_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/apitype"
	"github.com/hostlink/hostlink/internal/approvals"
	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/daemon"
	"github.com/hostlink/hostlink/internal/daemon/daemontest"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/mesh"
	"github.com/hostlink/hostlink/internal/meshhub/hubtest"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
)

// fixture is a daemon serving its registry on a one-node hub, and a
// caller the daemon's user trusts.
type fixture struct {
	d      *daemon.Daemon
	home   string
	hub    *hubtest.Hub
	ex     *mesh.Executor
	client *mesh.Client
}

func newFixture(t testing.TB, toml string, classes []policy.Class) *fixture {
	t.Helper()
	d, home := daemontest.Open(t, daemontest.Config{Workdirs: []string{"w"}, TOML: toml}, daemon.Options{})
	os.WriteFile(filepath.Join(home, "w", "f.txt"), []byte("hello mesh\n"), 0o644)
	hub := hubtest.Start(t)
	callerCreds := hub.Caller(t, "gateway", nil)
	trusted := map[string]mesh.Caller{hubtest.Key(callerCreds): {Name: "gateway", Key: hubtest.Key(callerCreds)}}
	idem, err := mesh.OpenIdemStore(filepath.Join(home, "mesh.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { idem.Close() })
	machine := hub.Machine(t, "m1")
	enr := &mesh.Enrolment{Key: hubtest.Key(machine), Name: "m1", JWT: machine.JWT, Callers: []mesh.Caller{trusted[hubtest.Key(callerCreds)]}}
	if err := enr.Save(d.Dirs.State); err != nil {
		t.Fatal(err)
	}
	ex, err := mesh.StartExecutor(mesh.ExecutorOptions{
		Dial:     mesh.Dial{Servers: hub.URLs(), Creds: machine},
		StateDir: d.Dirs.State,
		Decide: func(id string, approve bool, by string) (any, error) {
			return d.Approvals().DecideWith(id, approvals.Decision{Approve: approve, By: by, Via: audit.Mesh})
		},
		Machine:     mesh.Machine{Name: "m1", OS: "linux", Arch: "x86_64", Version: "test", Labels: map[string]string{"team": "a"}},
		Registry:    d.Registry,
		Classes:     classes,
		Callers:     func() map[string]mesh.Caller { return trusted },
		Idempotency: idem,
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(ex.Close)
	c, err := mesh.NewClient(mesh.Dial{Servers: hub.URLs(), Creds: callerCreds})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Close)
	return &fixture{d: d, home: home, hub: hub, ex: ex, client: c}
}

func ctx(t *testing.T) context.Context {
	c, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	t.Cleanup(cancel)
	return c
}

var callerIPC = ops.Caller{Transport: audit.IPC, Peer: "test"}

func codeOf(err error) errcode.Code { return errcode.CodeOf(err) }

// TestExecutorServesTheRegistry: a mesh call runs through the daemon's
// registry (same result as a local call), under the machine's [mesh]
// classes and its policy, and each call, refused or not, is one audit
// record with transport mesh and the caller's enrolled name and key,
// after the client it acts for when it names one (escaped).
func TestExecutorServesTheRegistry(t *testing.T) {
	f := newFixture(t, "", []policy.Class{policy.FilesRead})
	c := ctx(t)
	res, err := f.client.Call(mesh.ForClient(c, "claude-code 2.1.197\x1b[2J"), f.ex.Key(), "hash_file", []byte(`{"path":"f.txt"}`), "")
	if err != nil {
		t.Fatal(err)
	}
	var got struct{ SHA256 string }
	json.Unmarshal(res, &got)
	local, err := f.d.Registry.Call(c, callerIPC, "hash_file", []byte(`{"path":"f.txt"}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	lb, _ := json.Marshal(local)
	var want struct{ SHA256 string }
	json.Unmarshal(lb, &want)
	if got.SHA256 == "" || got.SHA256 != want.SHA256 {
		t.Fatalf("mesh sha256 %q, local %q", got.SHA256, want.SHA256)
	}
	// Not offered: a write, by default.
	_, err = f.client.Call(c, f.ex.Key(), "write_file", []byte(`{"path":"g.txt","content":"x"}`), "")
	if codeOf(err) != policy.CodeClassNotOffered {
		t.Fatalf("write_file with files_read offered: %v", err)
	}
	if _, serr := os.Stat(filepath.Join(f.home, "w", "g.txt")); serr == nil {
		t.Fatal("the write ran")
	}
	// The local user's controls are not there at all.
	_, err = f.client.Call(c, f.ex.Key(), apitype.MethodReload, []byte(`{}`), "")
	if codeOf(err) != errcode.UnknownOperation {
		t.Fatalf("reload over the mesh: %v", err)
	}
	// A path outside the workdir is the jail's, as everywhere.
	_, err = f.client.Call(c, f.ex.Key(), "read_file", []byte(`{"path":"../../etc/passwd"}`), "")
	if codeOf(err) != errcode.PathOutsideRoot {
		t.Fatalf("outside: %v", err)
	}
	lines, err := audit.Tail(f.d.Dirs.Audit, 100)
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	for _, l := range lines {
		if l.Transport == audit.Mesh && l.Op != "mesh_start" {
			want := "gateway U"
			if l.Op == "hash_file" {
				want = `claude-code 2.1.197\x1b[2J (gateway U`
			}
			if !strings.HasPrefix(l.Peer, want) {
				t.Errorf("%s recorded with peer %q, want %s…", l.Op, l.Peer, want)
			}
			seen = append(seen, l.Op+":"+l.Code)
		}
	}
	want2 := []string{"hash_file:OK", "write_file:CLASS_NOT_OFFERED", "reload:UNKNOWN_OPERATION", "read_file:PATH_OUTSIDE_ALLOWED_ROOT"}
	if strings.Join(seen, " ") != strings.Join(want2, " ") {
		t.Errorf("audited %v, want %v", seen, want2)
	}
}
