package policy_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/approvals"
	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/daemon"
	"github.com/hostlink/hostlink/internal/daemon/daemontest"
	"github.com/hostlink/hostlink/internal/errcode"
)

// An approval covers what the user was shown, not only the arguments
// (#37 item 4): when a target changes between what the approval showed
// and the moment the approved call acts (another command running in the
// workdir, say), the call fails with CONFLICT and changes nothing.
//
// Each case runs its call on the default policy; while the call waits
// for the user, the target changes; then the user approves and the held
// call goes on, finding the change.
func TestApprovalBindsShownState(t *testing.T) {
	d, home := daemontest.Open(t, daemontest.Config{Workdirs: []string{"a", "b"}, TOML: "[policy]\nwait_seconds = 300\n"}, daemon.Options{})
	f := &fixture{d: d, dirs: map[string]string{"a": filepath.Join(home, "a"), "b": filepath.Join(home, "b")}}
	type tree = map[string]string // path below the case's directory: content, "/" a directory, "->x" a symlink to x
	tests := []struct {
		name   string
		before tree
		op     string
		args   map[string]any // paths below the case's directory
		change func(p func(string) string)
		after  tree // what must be there afterwards
		links  bool
	}{
		{name: "write shown as a new file: a file was created meanwhile",
			op: "write_file", args: map[string]any{"path": "x.txt", "content": "new!"},
			change: func(p func(string) string) { put(t, p("x.txt"), "theirs") },
			after:  tree{"x.txt": "theirs"}},
		{name: "write shown as a new file: a symlink to another file was swapped in",
			before: tree{"other.txt": "keep"}, links: true,
			op: "write_file", args: map[string]any{"path": "x.txt", "content": "new!"},
			change: func(p func(string) string) { link(t, "other.txt", p("x.txt")) },
			after:  tree{"other.txt": "keep", "x.txt": "->other.txt"}},
		{name: "write shown as a new file: its directory was swapped for a symlink",
			before: tree{"sub": "/", "other": "/"}, links: true,
			op: "write_file", args: map[string]any{"path": "sub/x.txt", "content": "new!"},
			change: func(p func(string) string) { os.Rename(p("sub"), p("sub.old")); link(t, "other", p("sub")) },
			after:  tree{"other": "/", "sub.old": "/", "sub": "->other"}},
		{name: "write shown replacing a file: it was changed in place",
			before: tree{"x.txt": "old"},
			op:     "write_file", args: map[string]any{"path": "x.txt", "content": "new"},
			change: func(p func(string) string) { put(t, p("x.txt"), "OLD") },
			after:  tree{"x.txt": "OLD"}},
		{name: "write shown replacing a file: it was deleted",
			before: tree{"x.txt": "old"},
			op:     "write_file", args: map[string]any{"path": "x.txt", "content": "new"},
			change: func(p func(string) string) { os.Remove(p("x.txt")) },
			after:  tree{}},
		{name: "edit: the file changed where the edit still applies",
			before: tree{"x.txt": "a\nb\n"},
			op:     "edit_file", args: map[string]any{"path": "x.txt", "edits": []map[string]any{{"old_text": "b", "new_text": "B"}}},
			change: func(p func(string) string) { put(t, p("x.txt"), "a2\nb\n") },
			after:  tree{"x.txt": "a2\nb\n"}},
		{name: "delete shown as a file: a directory tree was swapped in",
			before: tree{"x": "1"},
			op:     "delete", args: map[string]any{"path": "x", "recursive": true},
			change: func(p func(string) string) { os.Remove(p("x")); put(t, p("x/keep"), "k") },
			after:  tree{"x/keep": "k"}},
		{name: "delete shown as an empty directory: it was filled",
			before: tree{"d": "/"},
			op:     "delete", args: map[string]any{"path": "d", "recursive": true},
			change: func(p func(string) string) { put(t, p("d/keep"), "k") },
			after:  tree{"d/keep": "k"}},
		{name: "delete shown as an empty directory, not recursive: it was filled",
			before: tree{"d": "/"},
			op:     "delete", args: map[string]any{"path": "d"},
			change: func(p func(string) string) { put(t, p("d/keep"), "k") },
			after:  tree{"d/keep": "k"}},
		{name: "delete shown as a tree: an entry was added",
			before: tree{"t/a": "1", "t/b/c": "2"},
			op:     "delete", args: map[string]any{"path": "t", "recursive": true},
			change: func(p func(string) string) { put(t, p("t/b/new"), "x") },
			after:  tree{"t/a": "1", "t/b/c": "2", "t/b/new": "x"}},
		{name: "delete shown as a tree: a file in it was replaced",
			before: tree{"t/a": "1", "t/b/c": "2"},
			op:     "delete", args: map[string]any{"path": "t", "recursive": true},
			change: func(p func(string) string) { replace(t, p("t/b/c"), "3") },
			after:  tree{"t/a": "1", "t/b/c": "3"}},
		{name: "delete shown as nothing there (missing_ok): a file was created",
			op: "delete", args: map[string]any{"path": "ghost", "missing_ok": true},
			change: func(p func(string) string) { put(t, p("ghost"), "boo") },
			after:  tree{"ghost": "boo"}},
		{name: "delete shown as a symlink: a file was put in its place",
			before: tree{"other.txt": "keep", "l": "->other.txt"}, links: true,
			op: "delete", args: map[string]any{"path": "l"},
			change: func(p func(string) string) { os.Remove(p("l")); put(t, p("l"), "mine") },
			after:  tree{"other.txt": "keep", "l": "mine"}},
		{name: "move shown to nothing (overwrite): the destination was created",
			before: tree{"src": "s"},
			op:     "move", args: map[string]any{"src": "src", "dst": "dst", "overwrite": true},
			change: func(p func(string) string) { put(t, p("dst"), "theirs") },
			after:  tree{"src": "s", "dst": "theirs"}},
		{name: "move shown to nothing: the destination was created",
			before: tree{"src": "s"},
			op:     "move", args: map[string]any{"src": "src", "dst": "dst"},
			change: func(p func(string) string) { put(t, p("dst"), "theirs") },
			after:  tree{"src": "s", "dst": "theirs"}},
		{name: "move shown replacing a file: another file replaced it",
			before: tree{"src": "s", "dst": "d"},
			op:     "move", args: map[string]any{"src": "src", "dst": "dst", "overwrite": true},
			change: func(p func(string) string) { replace(t, p("dst"), "theirs") },
			after:  tree{"src": "s", "dst": "theirs"}},
		{name: "move: another source was swapped in",
			before: tree{"src": "s"},
			op:     "move", args: map[string]any{"src": "src", "dst": "dst"},
			change: func(p func(string) string) { replace(t, p("src"), "swapped") },
			after:  tree{"src": "swapped"}},
		{name: "move of a directory: its tree changed",
			before: tree{"d/a": "1"},
			op:     "move", args: map[string]any{"src": "d", "dst": "e"},
			change: func(p func(string) string) { put(t, p("d/new"), "x") },
			after:  tree{"d/a": "1", "d/new": "x"}},
		{name: "move to another workdir: another source was swapped in",
			before: tree{"src": "s"},
			op:     "move", args: map[string]any{"src": "src", "dst_workdir": "b", "dst": "moved"},
			change: func(p func(string) string) { replace(t, p("src"), "swapped") },
			after:  tree{"src": "swapped"}},
		{name: "create directory: its parent was swapped for a symlink",
			before: tree{"sub": "/", "other": "/"}, links: true,
			op: "create_directory", args: map[string]any{"path": "sub/new"},
			change: func(p func(string) string) { os.Rename(p("sub"), p("sub.old")); link(t, "other", p("sub")) },
			after:  tree{"other": "/", "sub.old": "/", "sub": "->other"}},
	}
	for i, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := "case" + string(rune('a'+i))
			base := filepath.Join(f.dirs["a"], c)
			p := func(rel string) string { return filepath.Join(base, filepath.FromSlash(rel)) }
			os.MkdirAll(base, 0o755)
			for rel, v := range tt.before {
				make_(t, p(rel), v)
			}
			if tt.links && !canLink(base) {
				t.Skip("no symlinks here")
			}
			args := map[string]any{"workdir": "a"}
			for k, v := range tt.args {
				if s, ok := v.(string); ok && (k == "path" || k == "src" || (k == "dst" && tt.args["dst_workdir"] == nil)) {
					v = c + "/" + s
				}
				args[k] = v
			}
			if got := f.approveAfter(t, tt.op, args, func() { tt.change(p) }); got != errcode.Conflict {
				t.Errorf("%s after the change: %q, want CONFLICT", tt.op, got)
			}
			same(t, base, tt.after)
			if _, err := os.Stat(filepath.Join(f.dirs["b"], "moved")); err == nil {
				t.Error("the move reached the other workdir")
			}
		})
	}
}

// With nothing changed, the approved call runs as shown: binding the
// state does not get in the way of the ordinary case.
func TestApprovalUnchangedStateRuns(t *testing.T) {
	d, home := daemontest.Open(t, daemontest.Config{Workdirs: []string{"a"}, TOML: "[policy]\nwait_seconds = 300\n"}, daemon.Options{})
	f := &fixture{d: d, dirs: map[string]string{"a": filepath.Join(home, "a")}}
	a := f.dirs["a"]
	put(t, filepath.Join(a, "t", "x"), "1")
	put(t, filepath.Join(a, "t", "y", "z"), "22")
	put(t, filepath.Join(a, "f"), "old")
	for _, s := range []struct {
		op   string
		args map[string]any
	}{
		{"write_file", map[string]any{"workdir": "a", "path": "f", "content": "new"}},
		{"write_file", map[string]any{"workdir": "a", "path": "n/new", "content": "n", "create_parents": true}},
		{"edit_file", map[string]any{"workdir": "a", "path": "f", "edits": []map[string]any{{"old_text": "new", "new_text": "newer"}}}},
		{"move", map[string]any{"workdir": "a", "src": "f", "dst": "g"}},
		{"create_directory", map[string]any{"workdir": "a", "path": "e/f"}},
		{"move", map[string]any{"workdir": "a", "src": "t/y", "dst": "e/f", "overwrite": true}},
		{"delete", map[string]any{"workdir": "a", "path": "t", "recursive": true}},
		{"delete", map[string]any{"workdir": "a", "path": "nothing", "missing_ok": true}},
	} {
		if got := f.approveAfter(t, s.op, s.args, func() {}); got != "" {
			t.Fatalf("%s %v: %q", s.op, s.args, got)
		}
	}
	same(t, a, map[string]string{"e/f/z": "22", "g": "newer", "n/new": "n"})
}

// An approval made on one state cannot be used once the state changed:
// the identical request sent again gets CONFLICT and nothing runs; the
// approval is then stale (neither decidable nor usable) and the next
// resend asks anew, showing what is there now. The same holds for an
// approval still pending when the state changes.
func TestStaleApprovalIsEnded(t *testing.T) {
	f := newFixture(t, "")
	x := filepath.Join(f.dirs["a"], "x.txt")
	args := map[string]any{"workdir": "a", "path": "x.txt", "content": "new!"}
	b := f.d.Approvals()

	if got := f.callIn("s", "write_file", args); got != approvals.CodePending {
		t.Fatalf("first call: %q", got)
	}
	ap := b.List(true)[0]
	if _, err := b.Decide(ap.ID, true, "tester", audit.IPC); err != nil {
		t.Fatal(err)
	}
	put(t, x, "theirs")
	if got := f.callIn("s", "write_file", args); got != errcode.Conflict {
		t.Fatalf("resend after the change: %q, want CONFLICT", got)
	}
	if got, _ := os.ReadFile(x); string(got) != "theirs" {
		t.Fatalf("x.txt = %q", got)
	}
	if a, _ := b.Get(ap.ID); a.State != approvals.Stale {
		t.Fatalf("approval is %s, want stale", a.State)
	}
	// Changed back, the old approval stays ended.
	os.Remove(x)
	if got := f.callIn("s", "write_file", args); got != approvals.CodePending {
		t.Fatalf("resend: %q, want it asked anew", got)
	}
	fresh := b.List(true)[0]
	if fresh.ID == ap.ID || field(fresh, "Change") != "new file, 4 bytes" {
		t.Fatalf("asked anew: %s %q", fresh.ID, field(fresh, "Change"))
	}

	// Pending, then changed: the user can no longer approve what was
	// shown, and the resend is asked about what is there now.
	put(t, x, "theirs again")
	if got := f.callIn("s", "write_file", args); got != approvals.CodePending {
		t.Fatalf("resend while pending after the change: %q, want it asked anew", got)
	}
	if _, err := b.Decide(fresh.ID, true, "tester", audit.IPC); errcode.CodeOf(err) != approvals.CodeDecided {
		t.Fatalf("deciding a stale approval: %v", err)
	}
	if a, _ := b.Get(fresh.ID); a.State != approvals.Stale {
		t.Fatalf("approval is %s, want stale", a.State)
	}
	if c := field(b.List(true)[0], "Change"); !strings.HasPrefix(c, "replaces 12 bytes with 4 bytes") {
		t.Fatalf("asked anew with Change %q", c)
	}
}

// A grant was shown no state: what it covers runs on whatever is there
// (DESIGN, "Exact actions").
func TestGrantBindsNoState(t *testing.T) {
	f := newFixture(t, "")
	f.grantNext(t, "s", "write_file", write("a", "one"), approvals.Decision{Scope: approvals.ScopeSession})
	put(t, filepath.Join(f.dirs["a"], "two"), "theirs")
	if got := f.callIn("s", "write_file", write("a", "two")); got != "" {
		t.Fatalf("granted write: %q", got)
	}
}

// approveAfter calls op, and once it waits for the user, runs change and
// approves it; it returns the held call's outcome.
func (f *fixture) approveAfter(t *testing.T, op string, args map[string]any, change func()) errcode.Code {
	t.Helper()
	b := f.d.Approvals()
	done := make(chan errcode.Code, 1)
	go func() { done <- f.callIn("s", op, args) }()
	for {
		ch := b.Changed()
		if p := b.List(true); len(p) > 0 {
			change()
			if _, err := b.Decide(p[0].ID, true, "tester", audit.IPC); err != nil {
				t.Fatal(err)
			}
			return <-done
		}
		select {
		case <-ch:
		case got := <-done:
			t.Fatalf("%s %v was not asked: %q", op, args, got)
		}
	}
}

// make_ makes p: a directory for "/", a symlink for "->target", else a
// file with that content.
func make_(t *testing.T, p, v string) {
	t.Helper()
	switch {
	case v == "/":
		os.MkdirAll(p, 0o755)
	case strings.HasPrefix(v, "->"):
		os.MkdirAll(filepath.Dir(p), 0o755)
		os.Symlink(v[2:], p)
	default:
		put(t, p, v)
	}
}

func put(t *testing.T, p, content string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(p), 0o755)
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

// replace puts another file (a new object) at p.
func replace(t *testing.T, p, content string) {
	t.Helper()
	put(t, p+".new", content)
	if err := os.Rename(p+".new", p); err != nil {
		t.Fatal(err)
	}
}

func link(t *testing.T, target, p string) {
	t.Helper()
	if err := os.Symlink(target, p); err != nil {
		t.Fatal(err)
	}
}

func canLink(dir string) bool {
	p := filepath.Join(dir, ".probe-link")
	defer os.Remove(p)
	return os.Symlink("x", p) == nil
}

// same fails the test unless the tree at base is exactly want (see
// make_'s notation).
func same(t *testing.T, base string, want map[string]string) {
	t.Helper()
	got := map[string]string{}
	filepath.WalkDir(base, func(p string, d os.DirEntry, err error) error {
		if err != nil || p == base {
			return nil
		}
		rel := filepath.ToSlash(p[len(base)+1:])
		switch {
		case d.Type()&os.ModeSymlink != 0:
			target, _ := os.Readlink(p)
			got[rel] = "->" + filepath.ToSlash(target)
		case d.IsDir():
			got[rel] = "/"
		default:
			b, _ := os.ReadFile(p)
			got[rel] = string(b)
		}
		return nil
	})
	for rel, v := range want {
		if got[rel] != v {
			t.Errorf("%s = %q, want %q", rel, got[rel], v)
		}
	}
	for rel, v := range got {
		if _, ok := want[rel]; !ok && (v != "/" || !hasBelow(want, rel)) {
			t.Errorf("%s = %q is there, want nothing", rel, v)
		}
	}
}

// hasBelow reports whether want names something below the directory rel.
func hasBelow(want map[string]string, rel string) bool {
	for k := range want {
		if strings.HasPrefix(k, rel+"/") {
			return true
		}
	}
	return false
}
