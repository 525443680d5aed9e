package policy_test

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/approvals"
	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
)

// applyDiff applies a unified diff to old with git apply, a real patch
// tool, and returns the result: what the user was shown would land.
func applyDiff(t *testing.T, rel string, old []byte, exists bool, diff string) []byte {
	t.Helper()
	git, err := exec.LookPath("git")
	if err != nil {
		t.Skip("no git to apply the diff with")
	}
	dir := t.TempDir()
	p := filepath.Join(dir, filepath.FromSlash(rel))
	os.MkdirAll(filepath.Dir(p), 0o755)
	if exists {
		if err := os.WriteFile(p, old, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	os.WriteFile(filepath.Join(dir, "change.diff"), []byte(diff), 0o644)
	cmd := exec.Command(git, "apply", "--unsafe-paths", "change.diff")
	cmd.Dir = dir
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("git apply: %v\n%s\ndiff:\n%s", err, out, diff)
	}
	got, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return got
}

// The diff an approval shows is exactly what lands: applied to the old
// content it gives the file the approved call writes, byte for byte.
func TestShownDiffIsWhatLands(t *testing.T) {
	old := "package main\n\nfunc main() {\n\tprintln(\"hi\")\n}\n// a\n// b\n// c\n// d\n// e\nno newline at the end"
	tests := []struct {
		name   string
		exists bool
		op     string
		args   map[string]any
		change string // the Change field's start
	}{
		{"edit with context", true, "edit_file", map[string]any{"edits": []map[string]any{{"old_text": `"hi"`, "new_text": "\"hello\"\n\tprintln(\"again\")"}}}, "replaces"},
		{"edit at the end, no final newline", true, "edit_file", map[string]any{"edits": []map[string]any{{"old_text": "at the end", "new_text": "at the end\n"}}}, "replaces"},
		{"overwrite", true, "write_file", map[string]any{"content": "package main\n\nfunc main() {}\n"}, "replaces"},
		{"new file", false, "write_file", map[string]any{"content": "line 1\nline 2\n"}, "new file, 14 bytes"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, "")
			p := filepath.Join(f.dirs["a"], "src", "main.go")
			os.MkdirAll(filepath.Dir(p), 0o755)
			if tt.exists {
				if err := os.WriteFile(p, []byte(old), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			args := map[string]any{"workdir": "a", "path": "src/main.go"}
			for k, v := range tt.args {
				args[k] = v
			}
			if got := f.callIn("s", tt.op, args); got != approvals.CodePending {
				t.Fatalf("%s: %q", tt.op, got)
			}
			a := f.d.Approvals().List(true)[0]
			if c := field(a, "Change"); !strings.HasPrefix(c, tt.change) {
				t.Errorf("Change = %q, want %q…", c, tt.change)
			}
			if a.Action.Diff == "" {
				t.Fatal("no diff shown")
			}
			shown := applyDiff(t, "src/main.go", []byte(old), tt.exists, a.Action.Diff)
			if _, err := f.d.Approvals().Decide(a.ID, true, "t", audit.IPC); err != nil {
				t.Fatal(err)
			}
			if got := f.callIn("s", tt.op, args); got != "" {
				t.Fatalf("approved %s: %q", tt.op, got)
			}
			landed, _ := os.ReadFile(p)
			if !bytes.Equal(shown, landed) {
				t.Errorf("shown diff gives\n%q\nbut the file is\n%q", shown, landed)
			}
		})
	}
}

func field(a approvals.Approval, label string) string {
	for _, f := range a.Action.Fields {
		if f.Label == label {
			return f.Value
		}
	}
	return ""
}

// Binary content is shown by sizes and hashes; a write or edit that
// would fail is refused before the user is asked.
func TestChangeShownOrRefused(t *testing.T) {
	f := newFixture(t, "")
	a := f.dirs["a"]
	os.WriteFile(filepath.Join(a, "bin"), []byte{0, 1, 2, 3}, 0o644)
	os.WriteFile(filepath.Join(a, "text"), []byte("one\n"), 0o644)
	if got := f.callIn("s", "write_file", map[string]any{"workdir": "a", "path": "bin", "content": "AAEC", "encoding": "base64"}); got != approvals.CodePending {
		t.Fatalf("binary write: %q", got)
	}
	ap := f.d.Approvals().List(true)[0]
	if c := field(ap, "Change"); !strings.HasPrefix(c, "binary: 4 bytes (SHA-256 ") || !strings.Contains(c, "become 3 bytes") || ap.Action.Diff != "" {
		t.Errorf("binary change = %q, diff %q", c, ap.Action.Diff)
	}
	os.MkdirAll(filepath.Join(a, "tree", "sub"), 0o755)
	os.WriteFile(filepath.Join(a, "tree", "one"), []byte("12345"), 0o644)
	os.WriteFile(filepath.Join(a, "tree", "sub", "two"), []byte("123"), 0o644)
	shown := []struct {
		name, op string
		args     map[string]any
		label    string
		want     string
	}{
		{"recursive delete", "delete", map[string]any{"path": "tree", "recursive": true}, "Deletes", "directory with 3 entries below it, 8 bytes in files"},
		{"file delete", "delete", map[string]any{"path": "text"}, "Deletes", "file, 4 bytes"},
		{"move over a file", "move", map[string]any{"src": "tree/one", "dst": "text", "overwrite": true}, "Replaces", "yes, if allowed: file, 4 bytes"},
		{"move to nothing", "move", map[string]any{"src": "tree/one", "dst": "new"}, "Replaces", "no: nothing is at the destination"},
	}
	for _, s := range shown {
		s.args["workdir"] = "a"
		if got := f.callIn("s", s.op, s.args); got != approvals.CodePending {
			t.Fatalf("%s: %q", s.name, got)
		}
		var ap approvals.Approval
		for _, p := range f.d.Approvals().List(true) {
			if p.Action.Op == s.op && field(p, s.label) != "" && (ap.ID == "" || p.Created.After(ap.Created)) {
				ap = p
			}
		}
		if got := field(ap, s.label); got != s.want {
			t.Errorf("%s: %s = %q, want %q", s.name, s.label, got, s.want)
		}
	}
	refused := []struct {
		name string
		op   string
		args map[string]any
		want errcode.Code
	}{
		{"edit whose text is missing", "edit_file", map[string]any{"path": "text", "edits": []map[string]any{{"old_text": "two", "new_text": "2"}}}, errcode.Conflict},
		{"edit of a missing file", "edit_file", map[string]any{"path": "none", "edits": []map[string]any{{"old_text": "a", "new_text": "b"}}}, errcode.PathNotFound},
		{"create over a file", "write_file", map[string]any{"path": "text", "content": "x", "mode": "create"}, errcode.PathExists},
		{"overwrite of nothing", "write_file", map[string]any{"path": "none", "content": "x", "mode": "overwrite"}, errcode.PathNotFound},
		// Decoded once, before anyone is asked.
		{"write of content that is not base64", "write_file", map[string]any{"path": "none", "content": "!x", "encoding": "base64"}, errcode.InvalidArgument},
		{"delete of nothing", "delete", map[string]any{"path": "none"}, errcode.PathNotFound},
		{"delete of a full directory, not recursive", "delete", map[string]any{"path": "tree"}, errcode.PathNotEmpty},
		{"move of nothing", "move", map[string]any{"src": "none", "dst": "x"}, errcode.PathNotFound},
	}
	before := len(f.d.Approvals().List(false))
	for _, r := range refused {
		r.args["workdir"] = "a"
		if got := f.callIn("s", r.op, r.args); got != r.want {
			t.Errorf("%s: %q, want %q", r.name, got, r.want)
		}
	}
	if n := len(f.d.Approvals().List(false)); n != before {
		t.Errorf("refused calls asked: %d approvals, want %d", n, before)
	}
}
