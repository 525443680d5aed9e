package files

import (
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/errcode"
)

func edits(pairs ...any) []any {
	var out []any
	for i := 0; i+1 < len(pairs); i += 2 {
		out = append(out, map[string]any{"old_text": pairs[i], "new_text": pairs[i+1]})
	}
	return out
}

func TestEditFile(t *testing.T) {
	const orig = "alpha\nbeta\ngamma\nbeta\nend"
	cases := []struct {
		name     string
		edits    []any
		want     string // file after the edit ("" = unchanged, error expected)
		wantN    int
		wantCode errcode.Code
	}{
		{"single", edits("alpha", "ALPHA"), "ALPHA\nbeta\ngamma\nbeta\nend", 1, ""},
		{"sequential", edits("alpha", "one", "one\nbeta\ngamma", "two"), "two\nbeta\nend", 2, ""},
		{"later edit sees earlier result", edits("gamma", "delta", "delta", "epsilon"), "alpha\nbeta\nepsilon\nbeta\nend", 2, ""},
		{"unique with context", edits("gamma\nbeta", "gamma\nBETA"), "alpha\nbeta\ngamma\nBETA\nend", 1, ""},
		{"delete text", edits("gamma\n", ""), "alpha\nbeta\nbeta\nend", 1, ""},
		{"replace_all", []any{map[string]any{"old_text": "beta", "new_text": "B", "replace_all": true}},
			"alpha\nB\ngamma\nB\nend", 2, ""},
		{"replace_all single occurrence", []any{map[string]any{"old_text": "gamma", "new_text": "G", "replace_all": true}},
			"alpha\nbeta\nG\nbeta\nend", 1, ""},
		{"missing", edits("zeta", "x"), "", 0, errcode.Conflict},
		{"ambiguous", edits("beta", "x"), "", 0, errcode.Conflict},
		{"second edit missing", edits("alpha", "A", "zeta", "x"), "", 0, errcode.Conflict},
		{"second edit ambiguous", edits("alpha", "A", "beta", "x"), "", 0, errcode.Conflict},
		{"missing with replace_all", []any{map[string]any{"old_text": "zeta", "new_text": "x", "replace_all": true}},
			"", 0, errcode.Conflict},
		{"empty old_text", edits("", "x"), "", 0, errcode.InvalidArgument},
		{"empty old_text second", edits("alpha", "A", "", "x"), "", 0, errcode.InvalidArgument},
		{"no edits", []any{}, "", 0, errcode.InvalidArgument},
		{"case matters", edits("ALPHA", "x"), "", 0, errcode.Conflict},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, testLimits)
			e.write("root/f.txt", orig)
			m, code := e.call("edit_file", map[string]any{"path": "f.txt", "edits": c.edits})
			if code != c.wantCode {
				t.Fatalf("code %q, want %q", code, c.wantCode)
			}
			got := e.mustRead("root/f.txt")
			if c.wantCode != "" {
				if got != orig {
					t.Errorf("a refused edit changed the file to %q", got)
				}
				return
			}
			if got != c.want {
				t.Errorf("file = %q, want %q", got, c.want)
			}
			if int(num(m, "replacements")) != c.wantN {
				t.Errorf("replacements = %v, want %d", m["replacements"], c.wantN)
			}
			if str(m, "revision") != "sha256:"+sha([]byte(c.want)) || str(m, "sha256") != sha([]byte(c.want)) ||
				int(num(m, "bytes_written")) != len(c.want) || flag(m, "dry_run") {
				t.Errorf("result = %v", m)
			}
			e.noTemps()
		})
	}
}

func TestEditFileDiffAndDryRun(t *testing.T) {
	e := newEnv(t, testLimits, extraWorkdir{alias: "ro", dir: "ro", readOnly: true})
	const orig = "one\ntwo\nthree\n"
	e.write("root/sub/f.txt", orig)
	e.write("ro/f.txt", orig)
	before := str(e.ok("read_file", map[string]any{"path": "sub/f.txt"}), "revision")

	dry := e.ok("edit_file", map[string]any{"path": "sub/f.txt", "edits": edits("two", "TWO"), "dry_run": true})
	if e.mustRead("root/sub/f.txt") != orig {
		t.Fatal("dry_run wrote the file")
	}
	if !flag(dry, "dry_run") || int(num(dry, "replacements")) != 1 || str(dry, "revision") != before ||
		num(dry, "bytes_written") != 0 {
		t.Errorf("dry run result = %v", dry)
	}
	diff := str(dry, "diff")
	for _, want := range []string{"--- a/sub/f.txt\n", "+++ b/sub/f.txt\n", "@@ ", "\n-two\n", "\n+TWO\n", "\n one\n", "\n three\n"} {
		if !strings.Contains(diff, want) {
			t.Errorf("diff lacks %q:\n%s", want, diff)
		}
	}
	if strings.Contains(diff, "-one") || strings.Contains(diff, "+one") {
		t.Errorf("diff marks an unchanged line:\n%s", diff)
	}
	e.noTemps()

	// The real edit returns the same diff.
	real := e.ok("edit_file", map[string]any{"path": "sub/f.txt", "edits": edits("two", "TWO")})
	if str(real, "diff") != diff {
		t.Errorf("diff of the real edit differs from the dry run:\n%s\nvs\n%s", str(real, "diff"), diff)
	}
	if e.mustRead("root/sub/f.txt") != "one\nTWO\nthree\n" {
		t.Errorf("file = %q", e.mustRead("root/sub/f.txt"))
	}
	// A dry run is allowed on a read-only workdir; a real edit is not.
	d := e.ok("edit_file", map[string]any{"workdir": "ro", "path": "f.txt", "edits": edits("one", "1"), "dry_run": true})
	if !strings.Contains(str(d, "diff"), "+1\n") {
		t.Errorf("read-only dry run diff:\n%s", str(d, "diff"))
	}
	e.fail(errcode.ReadOnly, "edit_file", map[string]any{"workdir": "ro", "path": "f.txt", "edits": edits("one", "1")})
	if e.mustRead("ro/f.txt") != orig {
		t.Error("read-only file changed")
	}
}

func TestEditFileIfRevision(t *testing.T) {
	e := newEnv(t, testLimits)
	e.write("root/f.txt", "v1 text")
	rev := str(e.ok("read_file", map[string]any{"path": "f.txt"}), "revision")
	m := e.ok("edit_file", map[string]any{"path": "f.txt", "edits": edits("v1", "v2"), "if_revision": rev})
	if e.mustRead("root/f.txt") != "v2 text" {
		t.Fatal("edit with the current revision did not write")
	}
	e.fail(errcode.Conflict, "edit_file", map[string]any{"path": "f.txt", "edits": edits("v2", "v3"), "if_revision": rev})
	e.fail(errcode.Conflict, "edit_file", map[string]any{"path": "f.txt", "edits": edits("v2", "v3"), "if_revision": rev, "dry_run": true})
	if e.mustRead("root/f.txt") != "v2 text" {
		t.Error("a stale if_revision changed the file")
	}
	e.ok("edit_file", map[string]any{"path": "f.txt", "edits": edits("v2", "v3"), "if_revision": str(m, "revision")})
	if e.mustRead("root/f.txt") != "v3 text" {
		t.Error("edit with the revision edit_file returned did not write")
	}
}

func TestEditFileErrors(t *testing.T) {
	e := newEnv(t, testLimits)
	e.write("root/f.txt", "x")
	e.write("root/bin.dat", "a\x00b")
	e.write("root/dir/g.txt", "g")
	cases := []struct {
		name string
		args map[string]any
		want errcode.Code
	}{
		{"missing file", map[string]any{"path": "nope.txt", "edits": edits("x", "y")}, errcode.PathNotFound},
		{"directory", map[string]any{"path": "dir", "edits": edits("x", "y")}, errcode.NotAFile},
		{"unknown workdir", map[string]any{"workdir": "zz", "path": "f.txt", "edits": edits("x", "y")}, errcode.UnknownWorkdir},
		{"edits missing", map[string]any{"path": "f.txt"}, errcode.InvalidArgument},
		{"edit without old_text field", map[string]any{"path": "f.txt", "edits": []any{map[string]any{"new_text": "y"}}}, errcode.InvalidArgument},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { e.fail(c.want, "edit_file", c.args) })
	}
	// Binary files are edited byte-exactly too.
	e.ok("edit_file", map[string]any{"path": "bin.dat", "edits": edits("b", "c")})
	if e.mustRead("root/bin.dat") != "a\x00c" {
		t.Errorf("bin.dat = %q", e.mustRead("root/bin.dat"))
	}
}

func TestEditFileLimits(t *testing.T) {
	e := newEnv(t, smallLimits)                                                                                 // MaxReadBytes 16, MaxWriteBytes 16
	e.write("root/f.txt", "0123456789")                                                                         // 10 bytes
	e.write("root/big.txt", strings.Repeat("z", 17))                                                            // past the read limit
	e.write("root/at.txt", strings.Repeat("y", 15)+"Q")                                                         // at the read limit
	e.fail(errcode.FileTooLarge, "edit_file", map[string]any{"path": "f.txt", "edits": edits("0", "01234567")}) // 17 bytes
	e.fail(errcode.FileTooLarge, "edit_file", map[string]any{"path": "f.txt", "edits": edits("0", "01234567"), "dry_run": true})
	if e.mustRead("root/f.txt") != "0123456789" {
		t.Fatal("an edit over the write limit changed the file")
	}
	e.ok("edit_file", map[string]any{"path": "f.txt", "edits": edits("0", "0123456")}) // exactly 16 bytes
	if got := e.mustRead("root/f.txt"); got != "0123456123456789" {
		t.Errorf("file = %q (%d bytes)", got, len(got))
	}
	e.fail(errcode.FileTooLarge, "edit_file", map[string]any{"path": "big.txt", "edits": edits("z", "a")})
	e.ok("edit_file", map[string]any{"path": "at.txt", "edits": edits("Q", "R")})
	if e.mustRead("root/at.txt") != strings.Repeat("y", 15)+"R" {
		t.Error("edit of a file at the read limit failed")
	}
	e.noTemps()
}
