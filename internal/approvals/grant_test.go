package approvals

import (
	"context"
	"encoding/json"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
)

// clock is a time tests move by hand.
type clock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *clock) now() time.Time { c.mu.Lock(); defer c.mu.Unlock(); return c.t }
func (c *clock) add(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

func write(wd, rel string) Action {
	return Action{Op: "write_file", Class: "files_write", Transport: audit.MCPStdio, Session: "s1", Summary: "write " + rel,
		Targets: []Target{{Workdir: wd, WorkdirPath: "/w/" + wd, Rel: rel, Real: rel}},
		SHA256:  Digest(map[string]any{"wd": wd, "rel": rel})}
}

// pendingFor makes act's approval (the call answers pending at once).
func pendingFor(t *testing.T, b *Broker, act Action) string {
	t.Helper()
	id, err := b.Check(act)
	if errcode.CodeOf(err) != CodePending {
		t.Fatalf("check: %v", err)
	}
	return id
}

// A class grant covers its window and not a moment more.
func TestClassGrantWindow(t *testing.T) {
	c := &clock{t: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	b, _ := newBroker(t, time.Minute, 0)
	b.opts.Now = c.now
	id := pendingFor(t, b, write("a", "x"))
	a, err := b.DecideWith(id, Decision{Approve: true, Scope: ScopeClass, Minutes: 10, By: "uid 1 pid 2", Via: audit.IPC})
	if err != nil {
		t.Fatal(err)
	}
	if a.Scope != ScopeClass || a.Grant == "" || a.Decided.IsZero() || a.DecidedBy != "uid 1 pid 2" || a.DecidedVia != audit.IPC {
		t.Errorf("approval = %+v", a)
	}
	c.add(10*time.Minute - time.Nanosecond)
	if _, ok := b.Covered(write("a", "y")); !ok {
		t.Error("not covered just inside the window")
	}
	c.add(time.Nanosecond)
	if _, ok := b.Covered(write("a", "z")); ok {
		t.Error("covered at the window's end")
	}
	if len(b.Grants()) != 0 {
		t.Error("an ended grant is still listed")
	}
}

func TestDecisionScopeChecks(t *testing.T) {
	cmd := Action{Op: "run_command", Class: "commands", Transport: audit.MCPStdio, CommandLine: "go version", Argv: []string{"go", "version"},
		Targets: []Target{{Workdir: "a", WorkdirPath: "/w/a", Rel: ".", Real: "."}}, SHA256: Digest("cmd")}
	env := cmd
	env.HasEnv, env.SHA256 = true, Digest("env")
	tests := []struct {
		name string
		act  Action
		d    Decision
	}{
		{"class without minutes", write("a", "x"), Decision{Scope: ScopeClass}},
		{"class past the maximum", write("a", "x"), Decision{Scope: ScopeClass, Minutes: MaxGrantMinutes + 1}},
		{"path for a command", cmd, Decision{Scope: ScopePath}},
		{"command for a write", write("a", "x"), Decision{Scope: ScopeCommand}},
		{"command with an environment", env, Decision{Scope: ScopeCommand}},
		{"argv prefix that is not one", cmd, Decision{Scope: ScopeArgvPrefix, ArgvPrefix: []string{"go", "env"}}},
		{"empty argv prefix", cmd, Decision{Scope: ScopeArgvPrefix, ArgvPrefix: []string{}}},
		{"session without a session", cmd, Decision{Scope: ScopeSession}},
		{"unknown scope", cmd, Decision{Scope: "forever"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, _ := newBroker(t, time.Minute, 0)
			id := pendingFor(t, b, tt.act)
			tt.d.Approve = true
			if _, err := b.DecideWith(id, tt.d); errcode.CodeOf(err) != CodeBadScope {
				t.Errorf("err = %v, want %s", err, CodeBadScope)
			}
			// A refused scope decides nothing.
			if a, _ := b.Get(id); a.State != Pending {
				t.Errorf("state = %s", a.State)
			}
		})
	}
}

// A batch decides each approval on its own: one already decided does not
// stop the others.
func TestDecideBatch(t *testing.T) {
	b, dir := newBroker(t, time.Minute, 0)
	ids := []string{pendingFor(t, b, write("a", "1")), pendingFor(t, b, write("a", "2")), pendingFor(t, b, write("a", "3"))}
	if _, err := b.Decide(ids[1], false, "t", audit.IPC); err != nil {
		t.Fatal(err)
	}
	res := b.DecideBatch(append(ids, "apr_nope"), Decision{Approve: true, By: "t", Via: audit.Console})
	want := []errcode.Code{"", CodeDecided, "", CodeNotFound}
	for i, r := range res {
		if got := codeOf(r.Error); got != want[i] {
			t.Errorf("%s: %q, want %q", r.ID, got, want[i])
		}
	}
	for _, id := range []string{ids[0], ids[2]} {
		if _, err := b.Require(context.Background(), write("a", map[string]string{ids[0]: "1", ids[2]: "3"}[id])); err != nil {
			t.Errorf("approved %s: %v", id, err)
		}
	}
	recs := readAudit(t, dir)
	n := 0
	for _, r := range recs {
		if r.Op == "approval_decided" && r.Transport == audit.Console {
			n++
		}
	}
	if n != 2 {
		t.Errorf("%d console decisions audited, want 2", n)
	}
}

func codeOf(e *errcode.Error) errcode.Code {
	if e == nil {
		return ""
	}
	return e.Code
}

// Grants are audited when made, used and revoked.
func TestGrantAudited(t *testing.T) {
	b, dir := newBroker(t, time.Minute, 0)
	id := pendingFor(t, b, write("a", "x"))
	a, err := b.DecideWith(id, Decision{Approve: true, Scope: ScopeSession, By: "t", Via: audit.IPC})
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := b.Covered(write("a", "y")); !ok {
		t.Fatal("not covered")
	}
	if _, err := b.Revoke(a.Grant, "t", audit.IPC); err != nil {
		t.Fatal(err)
	}
	var ops []string
	for _, r := range readAudit(t, dir) {
		if r.Details["grant_id"] == a.Grant {
			ops = append(ops, r.Op)
		}
	}
	want := []string{"grant_created", "approval_decided", "grant_used", "grant_revoked"}
	if len(ops) != len(want) {
		t.Fatalf("audited %v, want %v", ops, want)
	}
	for i := range want {
		if ops[i] != want[i] {
			t.Errorf("audited %v, want %v", ops, want)
		}
	}
}

func readAudit(t *testing.T, dir string) []audit.Line {
	t.Helper()
	recs, err := audit.Tail(dir, 1000)
	if err != nil {
		t.Fatal(err)
	}
	return recs
}

// Approving a batch with one scope makes one grant, not one per approval.
func TestBatchMakesOneGrant(t *testing.T) {
	b, _ := newBroker(t, time.Minute, 0)
	ids := []string{pendingFor(t, b, write("a", "1")), pendingFor(t, b, write("a", "2"))}
	res := b.DecideBatch(ids, Decision{Approve: true, Scope: ScopeClass, Minutes: 5, By: "t", Via: audit.IPC})
	if res[0].Error != nil || res[1].Error != nil || res[0].Approval.Grant == "" || res[0].Approval.Grant != res[1].Approval.Grant {
		t.Errorf("batch = %+v", res)
	}
	if n := len(b.Grants()); n != 1 {
		t.Errorf("%d grants, want 1", n)
	}
}

// The marked observation of an act is served by approval id, never in the
// approval's JSON.
func TestApprovalImage(t *testing.T) {
	b, _ := newBroker(t, time.Minute, 0)
	act := write("a", "x")
	act.Image, act.PNG = &Image{ObservationID: "obs_1", Width: 1, Height: 1}, []byte("\x89PNG")
	id := pendingFor(t, b, act)
	if png, ok := b.Image(id); !ok || string(png) != "\x89PNG" {
		t.Errorf("image = %q, %v", png, ok)
	}
	if _, ok := b.Image(pendingFor(t, b, write("a", "y"))); ok {
		t.Error("an approval without an image has one")
	}
	a, _ := b.Get(id)
	if raw, _ := json.Marshal(a); strings.Contains(string(raw), "PNG") {
		t.Errorf("the PNG is in the JSON: %s", raw)
	}
}

// A session grant ends with its session, and none can be made once the
// session that asked has ended.
func TestSessionGrantEndsWithSession(t *testing.T) {
	b, _ := newBroker(t, time.Minute, 0)
	id := pendingFor(t, b, write("a", "x"))
	a, err := b.DecideWith(id, Decision{Approve: true, Scope: ScopeSession, By: "t", Via: audit.IPC})
	if err != nil {
		t.Fatal(err)
	}
	other := write("a", "y")
	other.Session = "s2"
	if _, ok := b.Covered(other); ok {
		t.Error("another session is covered")
	}
	b.EndSession("s1")
	if _, ok := b.Grant(a.Grant); ok {
		t.Error("the grant outlived its session")
	}
	late := write("a", "z")
	id = pendingFor(t, b, late)
	b.EndSession("s1")
	if _, err := b.DecideWith(id, Decision{Approve: true, Scope: ScopeSession}); errcode.CodeOf(err) != CodeBadScope {
		t.Errorf("a session grant for an ended session: %v", err)
	}
	if _, err := b.DecideWith(id, Decision{Approve: true}); err != nil {
		t.Errorf("once still works: %v", err)
	}
}

// A path grant covers targets below its directory, as written and as
// resolved, and never the directory itself, a sibling sharing its prefix,
// or anything above it.
func TestPathGrantBelow(t *testing.T) {
	g := &Grant{Scope: ScopePath, Class: "files_write", WorkdirPath: "/w/a", PathPrefix: "docs"}
	for _, tt := range []struct {
		rel, real string
		want      bool
	}{
		{"docs/x", "docs/x", true},
		{"docs/d/e", "docs/d/e", true},
		{"docs", "docs", false},
		{"docs/self", "docs", false}, // a link to the directory itself
		{"docs/up/x", "x", false},    // a link out of it
		{"x", "docs/x", false},       // a link into it
		{"docsx", "docsx", false},
		{"docsx/y", "docsx/y", false},
		{".", ".", false},
		{"", "", false},
		{"docs/x", "", false}, // not resolved
	} {
		act := write("a", tt.rel)
		act.Targets[0].Real = tt.real
		if got := covers(g, act, time.Now()); got != tt.want {
			t.Errorf("rel %q real %q: covered %v, want %v", tt.rel, tt.real, got, tt.want)
		}
	}
	root := &Grant{Scope: ScopePath, Class: "files_write", WorkdirPath: "/w/a", PathPrefix: "."}
	if covers(root, write("a", "x"), time.Now()) {
		t.Error("a grant for the workdir root covers something")
	}
}
