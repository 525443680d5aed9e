package policy_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/approvals"
	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/policy"
)

// callIn is a call from the client session session (the key a transport
// makes for one connection).
func (f *fixture) callIn(session, op string, args map[string]any) errcode.Code {
	b, _ := json.Marshal(args)
	_, err := f.d.Registry.Call(context.Background(), ops.Caller{Transport: audit.MCPStdio, Peer: "peer of " + session, Session: session}, op, b, nil)
	return errcode.CodeOf(err)
}

// grantNext asks with the call, then approves the approval it made with
// d's scope; it fails the test unless the call was asked.
func (f *fixture) grantNext(t *testing.T, session, op string, args map[string]any, d approvals.Decision) approvals.Grant {
	t.Helper()
	if got := f.callIn(session, op, args); got != approvals.CodePending {
		t.Fatalf("%s %v: %q, want it asked", op, args, got)
	}
	pending := f.d.Approvals().List(true)
	if len(pending) == 0 {
		t.Fatal("no pending approval")
	}
	d.Approve, d.By, d.Via = true, "tester", audit.IPC
	a, err := f.d.Approvals().DecideWith(pending[0].ID, d)
	if err != nil {
		t.Fatal(err)
	}
	g, ok := f.d.Approvals().Grant(a.Grant)
	if !ok {
		t.Fatalf("approval %s made no grant", a.ID)
	}
	// The approved call itself runs once.
	if got := f.callIn(session, op, args); got != "" {
		t.Fatalf("approved call: %q", got)
	}
	return g
}

func write(wd, path string) map[string]any {
	return map[string]any{"workdir": wd, "path": path, "content": "x"}
}

type step struct {
	name    string
	session string
	op      string
	args    map[string]any
	want    errcode.Code // "" runs unasked
}

func (f *fixture) run(t *testing.T, steps []step) {
	t.Helper()
	for _, s := range steps {
		if got := f.callIn(s.session, s.op, s.args); got != s.want {
			t.Errorf("%s: %q, want %q", s.name, got, s.want)
		}
	}
}

// On the default policy (files_write and commands ask), each scope lets
// through exactly what it says and nothing more.
func TestGrantScopes(t *testing.T) {
	echo := echoArgv()
	t.Run("session", func(t *testing.T) {
		f := newFixture(t, "")
		g := f.grantNext(t, "s1", "write_file", write("a", "first"), approvals.Decision{Scope: approvals.ScopeSession})
		if g.Class != "files_write" || g.Session != "s1" || g.Covers == "" || g.Ends == "" {
			t.Errorf("grant = %+v", g)
		}
		f.run(t, []step{
			{"next write of that session", "s1", "write_file", write("a", "second"), ""},
			{"and the one after, another workdir", "s1", "write_file", write("b", "third"), ""},
			{"a write of another session", "s2", "write_file", write("a", "other"), approvals.CodePending},
			{"a write of no session", "", "write_file", write("a", "none"), approvals.CodePending},
			{"a command of that session", "s1", "run_command", map[string]any{"workdir": "a", "argv": echo}, approvals.CodePending},
		})
		if got, _ := f.d.Approvals().Grant(g.ID); got.Uses != 2 {
			t.Errorf("uses = %d, want 2", got.Uses)
		}
		f.d.Approvals().EndSession("s1")
		f.run(t, []step{{"after the session ended", "s1", "write_file", write("a", "fourth"), approvals.CodePending}})
	})
	t.Run("class in workdir", func(t *testing.T) {
		f := newFixture(t, "")
		g := f.grantNext(t, "s1", "write_file", write("a", "first"), approvals.Decision{Scope: approvals.ScopeClass, Minutes: 10})
		if g.Expires.IsZero() || g.Workdir != "a" {
			t.Errorf("grant = %+v", g)
		}
		f.run(t, []step{
			{"a write of another client in that workdir", "s2", "write_file", write("a", "second"), ""},
			{"a delete there (files_write too)", "s2", "delete", map[string]any{"workdir": "a", "path": "second"}, ""},
			{"a write in another workdir", "s1", "write_file", write("b", "third"), approvals.CodePending},
			{"a command in that workdir", "s1", "run_command", map[string]any{"workdir": "a", "argv": echo}, approvals.CodePending},
		})
	})
	t.Run("path", func(t *testing.T) {
		f := newFixture(t, "")
		a := f.dirs["a"]
		for _, d := range []string{"sub", "other"} {
			if err := os.Mkdir(filepath.Join(a, d), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		// sub/link leads out of sub (to other), sub/out out of the workdir.
		if err := os.Symlink(filepath.Join("..", "other"), filepath.Join(a, "sub", "link")); err != nil {
			t.Skip("no symlinks:", err)
		}
		if err := os.Symlink(t.TempDir(), filepath.Join(a, "sub", "out")); err != nil {
			t.Fatal(err)
		}
		g := f.grantNext(t, "s1", "write_file", write("a", "sub/first"), approvals.Decision{Scope: approvals.ScopePath})
		if g.PathPrefix != "sub" {
			t.Errorf("path prefix = %q, want sub", g.PathPrefix)
		}
		f.run(t, []step{
			{"a write under it from another client", "s2", "write_file", write("a", "sub/second"), ""},
			{"a write deeper under it", "s2", "write_file", map[string]any{"workdir": "a", "path": "sub/d/e", "content": "x", "create_parents": true}, ""},
			{"a write through a link out of it", "s1", "write_file", write("a", "sub/link/f"), approvals.CodePending},
			{"a write beside it", "s1", "write_file", write("a", "other/f"), approvals.CodePending},
			{"a write in another workdir", "s1", "write_file", write("b", "sub/f"), approvals.CodePending},
			{"a write through the link out of the workdir: refused before asking", "s1", "write_file", write("a", "sub/out/f"), errcode.PathOutsideRoot},
		})
		// A directory that is a link out of the workdir cannot be granted.
		if got := f.callIn("s1", "write_file", write("a", "sub/third")); got != "" {
			t.Fatalf("write under the grant: %q", got)
		}
		if got := f.callIn("s1", "write_file", write("a", "elsewhere")); got != approvals.CodePending {
			t.Fatalf("write outside: %q", got)
		}
		p := f.d.Approvals().List(true)[0]
		_, err := f.d.Approvals().DecideWith(p.ID, approvals.Decision{Approve: true, Scope: approvals.ScopePath, Path: "sub/out"})
		if errcode.CodeOf(err) != approvals.CodeBadScope {
			t.Errorf("granting a link out of the workdir: %v, want %s", err, approvals.CodeBadScope)
		}
	})
	t.Run("command", func(t *testing.T) {
		f := newFixture(t, "")
		f.grantNext(t, "s1", "run_command", map[string]any{"workdir": "a", "argv": echo}, approvals.Decision{Scope: approvals.ScopeCommand})
		f.run(t, []step{
			{"the same line from another client", "s2", "run_command", map[string]any{"workdir": "a", "argv": echo}, ""},
			{"the same line as a shell command", "s2", "run_command", map[string]any{"workdir": "a", "command": policy.CommandLine("", echo)}, ""},
			{"with an environment", "s1", "run_command", map[string]any{"workdir": "a", "argv": echo, "env": map[string]string{"A": "1"}}, approvals.CodePending},
			{"a longer line", "s1", "run_command", map[string]any{"workdir": "a", "argv": append(slices.Clone(echo), "x")}, approvals.CodePending},
			{"in another workdir", "s1", "run_command", map[string]any{"workdir": "b", "argv": echo}, approvals.CodePending},
		})
	})
	t.Run("argv prefix", func(t *testing.T) {
		f := newFixture(t, "")
		f.grantNext(t, "s1", "run_command", map[string]any{"workdir": "a", "argv": echo},
			approvals.Decision{Scope: approvals.ScopeArgvPrefix, ArgvPrefix: echo[:1]})
		f.run(t, []step{
			{"argv with that prefix", "s2", "run_command", map[string]any{"workdir": "a", "argv": append(echo[:1:1], "env", "GOOS")}, ""},
			{"a shell line starting the same", "s2", "run_command", map[string]any{"workdir": "a", "command": echo[0] + " env"}, approvals.CodePending},
			{"another program", "s1", "run_command", map[string]any{"workdir": "a", "argv": []string{echo[0] + "fmt", "-l"}}, approvals.CodePending},
			{"in another workdir", "s1", "run_command", map[string]any{"workdir": "b", "argv": echo}, approvals.CodePending},
		})
		p := f.d.Approvals().List(true)[0]
		_, err := f.d.Approvals().DecideWith(p.ID, approvals.Decision{Approve: true, Scope: approvals.ScopeArgvPrefix, ArgvPrefix: []string{"sh"}})
		if errcode.CodeOf(err) != approvals.CodeBadScope {
			t.Errorf("a prefix that is not the action's: %v, want %s", err, approvals.CodeBadScope)
		}
	})
}

// A grant never lets through what deny refuses: a class grant in force
// when the workdir's writes become denied does not help.
func TestGrantNeverWidensDeny(t *testing.T) {
	f := newFixture(t, "")
	f.grantNext(t, "s1", "write_file", write("a", "first"), approvals.Decision{Scope: approvals.ScopeSession})
	f.reload(t, "[policy.workdirs.a]\nfiles_write = \"deny\"\n")
	f.run(t, []step{
		{"a write the grant covered, now denied", "s1", "write_file", write("a", "second"), policy.CodeDenied},
		{"still covered where it asks", "s1", "write_file", write("b", "second"), ""},
	})
}

// Revoking ends a grant at once; a revoked id is not found again.
func TestGrantRevoke(t *testing.T) {
	f := newFixture(t, "")
	g := f.grantNext(t, "s1", "write_file", write("a", "first"), approvals.Decision{Scope: approvals.ScopeSession})
	if _, err := f.d.Approvals().Revoke(g.ID, "tester", audit.IPC); err != nil {
		t.Fatal(err)
	}
	f.run(t, []step{{"after revoke", "s1", "write_file", write("a", "second"), approvals.CodePending}})
	if _, err := f.d.Approvals().Revoke(g.ID, "tester", audit.IPC); errcode.CodeOf(err) != approvals.CodeGrantNotFound {
		t.Errorf("second revoke: %v", err)
	}
	if len(f.d.Approvals().Grants()) != 0 {
		t.Errorf("grants = %v", f.d.Approvals().Grants())
	}
}

// A path grant covers what is below its directory and never the directory
// itself or anything above it, for every operation that writes: a grant
// for writes below docs does not let docs be deleted, moved away,
// replaced or re-created, whatever spelling or link names it. Saved to the
// configuration, it keeps that meaning.
func TestPathGrantCoversOnlyBelow(t *testing.T) {
	f := newFixture(t, "")
	a := f.dirs["a"]
	for _, d := range []string{"docs", "docs/old", "other"} {
		if err := os.Mkdir(filepath.Join(a, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []string{"docs/old/x", "top.txt", "other/y"} {
		if err := os.WriteFile(filepath.Join(a, p), []byte("x\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	// docs/self leads back to docs itself.
	if err := os.Symlink(".", filepath.Join(a, "docs", "self")); err != nil {
		t.Skip("no symlinks:", err)
	}
	g := f.grantNext(t, "s1", "write_file", write("a", "docs/first"), approvals.Decision{Scope: approvals.ScopePath})
	if g.PathPrefix != "docs" || !strings.Contains(g.Covers, "below docs/") || !strings.Contains(g.Covers, "not docs itself") {
		t.Errorf("grant = %+v", g)
	}
	wd := func(m map[string]any) map[string]any { m["workdir"] = "a"; return m }
	below := []step{
		{"write below it", "s2", "write_file", write("a", "docs/second"), ""},
		{"edit below it", "s2", "edit_file", wd(map[string]any{"path": "docs/second", "edits": []map[string]any{{"old_text": "x", "new_text": "y"}}}), ""},
		{"mkdir below it", "s2", "create_directory", wd(map[string]any{"path": "docs/new"}), ""},
		{"move within it", "s2", "move", wd(map[string]any{"src": "docs/second", "dst": "docs/new/second"}), ""},
		{"delete below it, recursively", "s2", "delete", wd(map[string]any{"path": "docs/new", "recursive": true}), ""},
		// docs/self/old is docs/old, below docs as written and as resolved.
		{"delete below it through a link inside it", "s2", "delete", wd(map[string]any{"path": "docs/self/old", "recursive": true}), ""},
	}
	asked := []step{
		{"delete the directory itself, recursively", "s1", "delete", wd(map[string]any{"path": "docs", "recursive": true}), approvals.CodePending},
		{"delete it spelled docs/.", "s1", "delete", wd(map[string]any{"path": "docs/.", "recursive": true}), approvals.CodePending},
		{"delete the link that is the directory", "s1", "delete", wd(map[string]any{"path": "docs/self", "recursive": true}), approvals.CodePending},
		{"delete above it", "s1", "delete", wd(map[string]any{"path": "docs/..", "recursive": true}), approvals.CodePending},
		{"move the directory away", "s1", "move", wd(map[string]any{"src": "docs", "dst": "gone"}), approvals.CodePending},
		{"move something onto the directory", "s1", "move", wd(map[string]any{"src": "other", "dst": "docs", "overwrite": true}), approvals.CodePending},
		{"move from below it to outside", "s1", "move", wd(map[string]any{"src": "docs/first", "dst": "out"}), approvals.CodePending},
		{"move from outside to below it", "s1", "move", wd(map[string]any{"src": "top.txt", "dst": "docs/top.txt"}), approvals.CodePending},
		{"mkdir the directory itself", "s1", "create_directory", wd(map[string]any{"path": "docs"}), approvals.CodePending},
		{"write beside it", "s1", "write_file", write("a", "docsx"), approvals.CodePending},
		{"write at the root", "s1", "write_file", write("a", "top.txt"), approvals.CodePending},
	}
	f.run(t, below)
	f.run(t, asked)

	// Saved, the rule is docs/**/*, which matches what is below docs and
	// not docs: with the grant revoked, the rule alone decides.
	res, err := f.d.SaveGrant(g.ID, true, "tester")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.TOML, "'docs/**/*'") {
		t.Errorf("saved TOML %q", res.TOML)
	}
	if _, err := f.d.Approvals().Revoke(g.ID, "tester", audit.IPC); err != nil {
		t.Fatal(err)
	}
	f.run(t, []step{
		{"a write below it, by the saved rule", "s3", "write_file", write("a", "docs/third"), ""},
		{"the directory itself, by the saved rule", "s3", "delete", wd(map[string]any{"path": "docs", "recursive": true}), approvals.CodePending},
		{"moving it away, by the saved rule", "s3", "move", wd(map[string]any{"src": "docs", "dst": "gone"}), approvals.CodePending},
	})
}

// A file at the workdir's root has no directory below the workdir to
// grant: a path grant for it, or one naming the root however spelled, is
// refused and the user is pointed to the class scope, with its window.
func TestPathGrantNeverTheWorkdir(t *testing.T) {
	f := newFixture(t, "")
	if err := os.Mkdir(filepath.Join(f.dirs["a"], "docs"), 0o755); err != nil {
		t.Fatal(err)
	}
	if got := f.callIn("s1", "write_file", write("a", "top.txt")); got != approvals.CodePending {
		t.Fatalf("write: %q", got)
	}
	id := f.d.Approvals().List(true)[0].ID
	for _, p := range []string{"", ".", "./", "docs/..", "docs/../."} {
		_, err := f.d.Approvals().DecideWith(id, approvals.Decision{Approve: true, Scope: approvals.ScopePath, Path: p, By: "t", Via: audit.IPC})
		if errcode.CodeOf(err) != approvals.CodeBadScope || !strings.Contains(err.Error(), "scope class") {
			t.Errorf("path %q for a file at the root: %v", p, err)
		}
	}
	if a, _ := f.d.Approvals().Get(id); a.State != approvals.Pending || len(f.d.Approvals().Grants()) != 0 {
		t.Fatalf("a refused scope decided: %+v, grants %v", a, f.d.Approvals().Grants())
	}
	// The directory a recursive delete removes cannot be granted for it.
	if got := f.callIn("s1", "delete", map[string]any{"workdir": "a", "path": "docs", "recursive": true}); got != approvals.CodePending {
		t.Fatalf("delete: %q", got)
	}
	for _, ap := range f.d.Approvals().List(true) {
		if ap.Action.Op != "delete" {
			continue
		}
		_, err := f.d.Approvals().DecideWith(ap.ID, approvals.Decision{Approve: true, Scope: approvals.ScopePath, Path: "docs", By: "t", Via: audit.IPC})
		if errcode.CodeOf(err) != approvals.CodeBadScope {
			t.Errorf("a path grant of docs for deleting docs: %v", err)
		}
	}
}

// TestGrantCoversOnlyItsClass: a grant lets through its own class and
// nothing else an action needs: where files_read asks, a grant for writes
// (of a session, a workdir or a directory) does not let an edit show the
// file's lines, a write with if_revision its revision, or a move carry a
// file out, since reading those was never approved.
func TestGrantCoversOnlyItsClass(t *testing.T) {
	for _, d := range []approvals.Decision{{Scope: approvals.ScopeSession}, {Scope: approvals.ScopeClass, Minutes: 10}, {Scope: approvals.ScopePath}} {
		t.Run(string(d.Scope), func(t *testing.T) {
			f := newFixture(t, "files_read = \"ask\"\n")
			os.MkdirAll(filepath.Join(f.dirs["a"], "sub"), 0o755)
			os.WriteFile(filepath.Join(f.dirs["a"], "sub", "secret.txt"), []byte("the secret\n"), 0o600)
			f.grantNext(t, "s1", "write_file", write("a", "sub/first"), d)
			f.run(t, []step{
				{"a plain write is the grant's", "s1", "write_file", write("a", "sub/second"), ""},
				{"an edit shows the lines", "s1", "edit_file", map[string]any{"workdir": "a", "path": "sub/secret.txt",
					"edits": []any{map[string]any{"old_text": "the", "new_text": "a"}}}, approvals.CodePending},
				{"a write with if_revision may show the revision", "s1", "write_file", map[string]any{"workdir": "a",
					"path": "sub/secret.txt", "content": "x", "if_revision": "nope"}, approvals.CodePending},
			})
			if d.Scope == approvals.ScopeSession {
				f.run(t, []step{{"a move out carries the content away", "s1", "move", map[string]any{"workdir": "a",
					"src": "sub/secret.txt", "dst": "s.txt", "dst_workdir": "b"}, approvals.CodePending}})
			}
			if b, _ := os.ReadFile(filepath.Join(f.dirs["a"], "sub", "secret.txt")); string(b) != "the secret\n" {
				t.Errorf("secret.txt was changed: %q", b)
			}
		})
	}
}
