package files

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"unicode/utf8"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
)

// hit is a match reduced to what the tables compare.
type hit struct {
	path      string
	line, col int
	text      string
}

func hits(m map[string]any) []hit {
	var out []hit
	for _, o := range list(m, "matches") {
		out = append(out, hit{str(o, "path"), int(num(o, "line")), int(num(o, "column")), str(o, "text")})
	}
	return out
}

func TestSearchText(t *testing.T) {
	e := newEnv(t, testLimits)
	e.write("root/a.txt", "first line\nthe a.b literal\naxb is not\nA.B upper\n")
	e.write("root/src/main.go", "package main\n\nfunc main() {\n\tprintln(\"hello\")\n}\n")
	e.write("root/src/util.go", "package main\n// TODO: hello world\n")
	e.write("root/src/vendor/dep.go", "package dep // hello\n")
	e.write("root/docs/readme.md", "say hello\r\nbye\r\n")
	e.write("root/docs/notes.log", "hello from a log\n")
	e.write("root/.hidden/h.txt", "hello hidden\n")
	e.write("root/.dot.txt", "hello dot\n")
	e.write("root/columns.txt", "xx\n  xyz hello hello\nαβγ hello\n")

	cases := []struct {
		name string
		args map[string]any
		want []hit
	}{
		{"literal with metachar matches literally", map[string]any{"query": "a.b", "path": "a.txt"},
			[]hit{{"a.txt", 2, 5, "the a.b literal"}}},
		{"regex metachar", map[string]any{"query": "a.b", "regex": true, "path": "a.txt"},
			[]hit{{"a.txt", 2, 5, "the a.b literal"}, {"a.txt", 3, 1, "axb is not"}}},
		{"literal case-insensitive", map[string]any{"query": "a.b", "case_insensitive": true, "path": "a.txt"},
			[]hit{{"a.txt", 2, 5, "the a.b literal"}, {"a.txt", 4, 1, "A.B upper"}}},
		{"regex case-insensitive", map[string]any{"query": "^a.b", "regex": true, "case_insensitive": true, "path": "a.txt"},
			[]hit{{"a.txt", 3, 1, "axb is not"}, {"a.txt", 4, 1, "A.B upper"}}},
		{"literal parens and star", map[string]any{"query": "main() {", "path": "src"},
			[]hit{{"src/main.go", 3, 6, "func main() {"}}},
		{"regex anchors and classes", map[string]any{"query": `^\t\w+\(`, "regex": true, "path": "src"},
			[]hit{{"src/main.go", 4, 1, "\tprintln(\"hello\")"}}},
		{"default: all non-hidden files, walk order", map[string]any{"query": "hello"},
			[]hit{{"columns.txt", 2, 7, "  xyz hello hello"}, {"columns.txt", 3, 8, "αβγ hello"},
				{"docs/notes.log", 1, 1, "hello from a log"}, {"docs/readme.md", 1, 5, "say hello"},
				{"src/main.go", 4, 11, "\tprintln(\"hello\")"}, {"src/util.go", 2, 10, "// TODO: hello world"},
				{"src/vendor/dep.go", 1, 16, "package dep // hello"}}},
		{"include", map[string]any{"query": "hello", "include": []string{"**/*.go"}},
			[]hit{{"src/main.go", 4, 11, "\tprintln(\"hello\")"}, {"src/util.go", 2, 10, "// TODO: hello world"},
				{"src/vendor/dep.go", 1, 16, "package dep // hello"}}},
		{"include several", map[string]any{"query": "hello", "include": []string{"*.txt", "docs/*.md"}},
			[]hit{{"columns.txt", 2, 7, "  xyz hello hello"}, {"columns.txt", 3, 8, "αβγ hello"},
				{"docs/readme.md", 1, 5, "say hello"}}},
		{"exclude a directory", map[string]any{"query": "hello", "include": []string{"**/*.go"}, "exclude": []string{"src/vendor"}},
			[]hit{{"src/main.go", 4, 11, "\tprintln(\"hello\")"}, {"src/util.go", 2, 10, "// TODO: hello world"}}},
		{"exclude by extension", map[string]any{"query": "hello", "exclude": []string{"**/*.log", "**/*.go", "*.txt"}},
			[]hit{{"docs/readme.md", 1, 5, "say hello"}}},
		{"include relative to path", map[string]any{"query": "hello", "path": "src", "include": []string{"*.go"}},
			[]hit{{"src/main.go", 4, 11, "\tprintln(\"hello\")"}, {"src/util.go", 2, 10, "// TODO: hello world"}}},
		{"hidden included", map[string]any{"query": "hello", "include_hidden": true, "include": []string{"**/*.txt"}},
			[]hit{{".dot.txt", 1, 1, "hello dot"}, {".hidden/h.txt", 1, 1, "hello hidden"},
				{"columns.txt", 2, 7, "  xyz hello hello"}, {"columns.txt", 3, 8, "αβγ hello"}}},
		{"a single file", map[string]any{"query": "hello", "path": "docs/readme.md"},
			[]hit{{"docs/readme.md", 1, 5, "say hello"}}},
		{"a hidden file named directly", map[string]any{"query": "hello", "path": ".dot.txt"},
			[]hit{{".dot.txt", 1, 1, "hello dot"}}},
		{"CRLF: \\r not in text", map[string]any{"query": "bye", "path": "docs"},
			[]hit{{"docs/readme.md", 2, 1, "bye"}}},
		{"regex matching \\r", map[string]any{"query": `bye\r$`, "regex": true, "path": "docs"},
			[]hit{{"docs/readme.md", 2, 1, "bye"}}},
		{"no match", map[string]any{"query": "absent"}, nil},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := e.ok("search_text", c.args)
			if got := hits(m); !slices.Equal(got, c.want) {
				t.Errorf("matches:\n%v\nwant\n%v", got, c.want)
			}
			if flag(m, "truncated") || str(m, "stop_reason") != "" {
				t.Errorf("truncated %v stop_reason %q", m["truncated"], str(m, "stop_reason"))
			}
		})
	}
	m := e.ok("search_text", map[string]any{"query": "hello", "path": "src"})
	if int(num(m, "files_scanned")) != 3 || int(num(m, "files_skipped")) != 0 || str(m, "path") != "src" {
		t.Errorf("counts: %v", m)
	}
	var size int64
	for _, f := range []string{"main.go", "util.go", "vendor/dep.go"} {
		fi, _ := os.Stat(filepath.Join(e.root, "src", filepath.FromSlash(f)))
		size += fi.Size()
	}
	if int64(num(m, "bytes_scanned")) != size {
		t.Errorf("bytes_scanned = %v, want %d", m["bytes_scanned"], size)
	}
	if _, isList := e.ok("search_text", map[string]any{"query": "absent"})["matches"].([]any); !isList {
		t.Error("matches of an empty result is not []")
	}
	for _, bad := range []map[string]any{
		{"query": ""},
		{"query": "(unclosed", "regex": true},
		{"query": "x", "include": []string{"[bad"}},
		{"query": "x", "exclude": []string{"{a,b"}},
		{},
	} {
		e.fail(errcode.InvalidArgument, "search_text", bad)
	}
	e.fail(errcode.PathNotFound, "search_text", map[string]any{"query": "x", "path": "nope"})
	e.fail(errcode.UnknownWorkdir, "search_text", map[string]any{"query": "x", "workdir": "nope"})
}

func TestSearchTextSkips(t *testing.T) {
	e := newEnv(t, smallLimits)                                // MaxSearchFileBytes 16
	e.write("root/bin1.dat", "needle\x00rest")                 // NUL in the first bytes
	e.write("root/text1.txt", "needle")                        // 6 bytes
	e.write("root/at.txt", "needle"+strings.Repeat(".", 10))   // 16 bytes: at the limit
	e.write("root/past.txt", "needle"+strings.Repeat(".", 11)) // 17 bytes: past it
	e.write("root/z-bin.dat", "\x00\x01\x02needle")            // NUL first
	m := e.ok("search_text", map[string]any{"query": "needle"})
	got := paths(list(m, "matches"))
	if want := []string{"at.txt", "text1.txt"}; !slices.Equal(got, want) {
		t.Errorf("matches in %v, want %v", got, want)
	}
	if int(num(m, "files_skipped")) != 3 || int(num(m, "files_scanned")) != 2 {
		t.Errorf("files_skipped %v files_scanned %v, want 3 and 2", m["files_skipped"], m["files_scanned"])
	}
	if flag(m, "truncated") {
		t.Errorf("skipping files is not truncation: %v", m)
	}
	// Named directly, a file past the limit is skipped too.
	m = e.ok("search_text", map[string]any{"query": "needle", "path": "past.txt"})
	if len(list(m, "matches")) != 0 || int(num(m, "files_skipped")) != 1 {
		t.Errorf("past.txt searched directly: %v", m)
	}
}

func TestSearchTextBinaryLate(t *testing.T) {
	e := newEnv(t, testLimits)
	// A NUL past the first 8000 bytes does not make a file binary.
	e.write("root/late.txt", "needle\n"+strings.Repeat("x", 8000)+"\x00")
	e.write("root/early.txt", strings.Repeat("x", 7999)+"\x00needle")
	m := e.ok("search_text", map[string]any{"query": "needle"})
	if got := paths(list(m, "matches")); !slices.Equal(got, []string{"late.txt"}) || int(num(m, "files_skipped")) != 1 {
		t.Errorf("matches %v, skipped %v", got, m["files_skipped"])
	}
}

func TestSearchTextMaxMatches(t *testing.T) {
	cases := []struct {
		name      string
		files     map[string]string
		args      map[string]any
		want      int
		truncated bool
	}{
		{"at the limit", map[string]string{"a.txt": "hit\nhit\n", "b.txt": "hit\n"}, nil, 3, false},
		{"one past the limit, one file", map[string]string{"a.txt": "hit\nhit\nhit\nhit\n"}, nil, 3, true},
		{"one past the limit, across files", map[string]string{"a.txt": "hit\nhit\n", "b.txt": "hit\n", "c.txt": "hit\n"}, nil, 3, true},
		{"max_matches below the limit", map[string]string{"a.txt": "hit\nhit\nhit\n"}, map[string]any{"max_matches": 2}, 2, true},
		{"max_matches equal to the count", map[string]string{"a.txt": "hit\nhit\n"}, map[string]any{"max_matches": 2}, 2, false},
		{"max_matches past the limit is capped", map[string]string{"a.txt": "hit\nhit\nhit\nhit\nhit\n"}, map[string]any{"max_matches": 4}, 3, true},
		{"several hits on one line count once", map[string]string{"a.txt": "hit hit hit hit\nhit\n"}, nil, 2, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, Limits{MaxReadBytes: 1 << 10, MaxWriteBytes: 1 << 10, MaxListEntries: 100,
				MaxSearchMatches: 3, MaxSearchBytes: 1 << 20, MaxSearchFileBytes: 1 << 10})
			for n, content := range c.files {
				e.write("root/"+n, content)
			}
			args := map[string]any{"query": "hit"}
			for k, v := range c.args {
				args[k] = v
			}
			m := e.ok("search_text", args)
			if n := len(list(m, "matches")); n != c.want {
				t.Errorf("%d matches, want %d", n, c.want)
			}
			if flag(m, "truncated") != c.truncated {
				t.Errorf("truncated = %v, want %v", m["truncated"], c.truncated)
			}
			wantReason := ""
			if c.truncated {
				wantReason = "max_matches"
			}
			if str(m, "stop_reason") != wantReason {
				t.Errorf("stop_reason = %q, want %q", str(m, "stop_reason"), wantReason)
			}
		})
	}
}

func TestSearchTextMaxBytes(t *testing.T) {
	limits := Limits{MaxReadBytes: 1 << 10, MaxWriteBytes: 1 << 10, MaxListEntries: 100, MaxSearchMatches: 100,
		MaxSearchBytes: 64, MaxSearchFileBytes: 1 << 10}
	sixteen := "hit" + strings.Repeat(".", 12) + "\n" // 16 bytes
	cases := []struct {
		name      string
		files     []string // contents, named f0, f1, … in walk order
		matches   int
		scanned   int64
		truncated bool
	}{
		{"at the limit", []string{sixteen, sixteen, sixteen, sixteen}, 4, 64, false},
		{"one past the limit", []string{sixteen, sixteen, sixteen, sixteen, "h"}, 4, 64, true},
		{"one file past the limit", []string{sixteen, sixteen, sixteen, sixteen + "x"}, 3, 48, true},
		{"a single file past the limit", []string{strings.Repeat("hit\n", 17)}, 0, 0, true},
		{"a single file at the limit", []string{strings.Repeat("hit\n", 16)}, 16, 64, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, limits)
			for i, content := range c.files {
				e.write(fmt.Sprintf("root/f%d.txt", i), content)
			}
			m := e.ok("search_text", map[string]any{"query": "hit"})
			if n := len(list(m, "matches")); n != c.matches {
				t.Errorf("%d matches, want %d", n, c.matches)
			}
			if int64(num(m, "bytes_scanned")) != c.scanned {
				t.Errorf("bytes_scanned = %v, want %d", m["bytes_scanned"], c.scanned)
			}
			if flag(m, "truncated") != c.truncated {
				t.Errorf("truncated = %v, want %v", m["truncated"], c.truncated)
			}
			wantReason := ""
			if c.truncated {
				wantReason = "max_bytes"
			}
			if str(m, "stop_reason") != wantReason {
				t.Errorf("stop_reason = %q, want %q", str(m, "stop_reason"), wantReason)
			}
		})
	}
}

func TestSearchTextLongLines(t *testing.T) {
	e := newEnv(t, testLimits)
	exact := strings.Repeat("a", 396) + "hit!"           // 400 bytes
	long := "hit" + strings.Repeat("b", 500)             // ASCII, cut at 400
	split := "hit" + strings.Repeat("c", 396) + "é tail" // é spans bytes 399–400
	three := strings.Repeat("d", 398) + "€hit"           // € spans bytes 398–400
	invalid := "hit " + string([]byte{0xff, 0xfe}) + " end"
	e.write("root/lines.txt", strings.Join([]string{exact, long, split, three, invalid}, "\n")+"\n")
	m := e.ok("search_text", map[string]any{"query": "hit"})
	got := hits(m)
	if len(got) != 5 {
		t.Fatalf("matches: %v", got)
	}
	want := []struct {
		line, col int
		text      string
	}{
		{1, 397, exact},
		{2, 1, long[:400]},
		{3, 1, split[:399]},
		{4, 402, three[:398]},
		{5, 1, invalid},
	}
	for i, w := range want {
		g := got[i]
		if g.line != w.line || g.col != w.col || g.text != strings.ToValidUTF8(w.text, "\uFFFD") {
			t.Errorf("match %d: line %d col %d text %q (%d bytes), want line %d col %d text %q (%d bytes)",
				i, g.line, g.col, g.text, len(g.text), w.line, w.col, w.text, len(w.text))
		}
		if len(g.text) > 400 && i < 4 {
			t.Errorf("match %d: text of %d bytes", i, len(g.text))
		}
		if !utf8.ValidString(g.text) {
			t.Errorf("match %d: text is not valid UTF-8", i)
		}
	}
}

// callWithProgress runs search_text through the registry with a progress
// callback, returning the result, the error code and the progress reports.
func callWithProgress(t *testing.T, e *env, ctx context.Context, args map[string]any, onProgress func()) (map[string]any, errcode.Code, []string) {
	t.Helper()
	raw, _ := json.Marshal(args)
	var mu sync.Mutex
	var reports []string
	progress := func(done, total float64, msg string) {
		mu.Lock()
		reports = append(reports, fmt.Sprintf("%.0f/%.0f %s", done, total, msg))
		mu.Unlock()
		if onProgress != nil {
			onProgress()
		}
	}
	out, err := e.reg.Call(ctx, ops.Caller{Transport: audit.MCPStdio, Peer: "test"}, "search_text", raw, progress)
	if err != nil {
		return nil, errcode.CodeOf(err), reports
	}
	b, _ := json.Marshal(out)
	var m map[string]any
	json.Unmarshal(b, &m)
	return m, "", reports
}

func TestSearchTextProgress(t *testing.T) {
	e := newEnv(t, testLimits)
	const files = 140
	for i := range files {
		e.write(fmt.Sprintf("root/d%d/f%03d.txt", i%3, i), "some text with a needle\n")
	}
	m, code, reports := callWithProgress(t, e, context.Background(), map[string]any{"query": "absent"}, nil)
	if code != "" || int(num(m, "files_scanned")) != files {
		t.Fatalf("code %q, result %v", code, m)
	}
	if len(reports) != files/64 {
		t.Fatalf("%d progress reports for %d files, want %d: %v", len(reports), files, files/64, reports)
	}
	if !strings.Contains(reports[0], "scanned 64 files") || !strings.Contains(reports[1], "scanned 128 files") {
		t.Errorf("reports %v", reports)
	}
	line := int64(len("some text with a needle\n"))
	if want := fmt.Sprintf("%d/%d scanned 64 files", 64*line, testLimits.MaxSearchBytes); reports[0] != want {
		t.Errorf("first report %q, want %q", reports[0], want)
	}
	// No progress callback at all is fine.
	e.ok("search_text", map[string]any{"query": "absent"})
}

func TestSearchTextCancel(t *testing.T) {
	e := newEnv(t, testLimits)
	for i := range 200 {
		e.write(fmt.Sprintf("root/f%03d.txt", i), "absent-not\n")
	}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	calls := 0
	m, code, reports := callWithProgress(t, e, ctx, map[string]any{"query": "needle"}, func() { calls++; cancel() })
	if code != errcode.Cancelled {
		t.Fatalf("code %q (result %v), want CANCELLED", code, m)
	}
	if len(reports) != 1 || calls != 1 {
		t.Errorf("the search went on after cancel: %d progress reports", len(reports))
	}
	// An already-cancelled context stops the search before it reads anything.
	_, code, _ = callWithProgress(t, e, ctx, map[string]any{"query": "needle"}, nil)
	if code != errcode.Cancelled {
		t.Errorf("search with a cancelled context: code %q", code)
	}
	lines := tail(t, e, 2)
	for _, l := range lines {
		if l.Op != "search_text" || l.Code != string(errcode.Cancelled) {
			t.Errorf("audit record %s %s, want search_text CANCELLED", l.Op, l.Code)
		}
	}
}

func TestSearchTextSymlinks(t *testing.T) {
	e := newEnv(t, testLimits)
	e.write("root/real.txt", "needle inside\n")
	e.write("outside/secret.txt", "needle outside\n")
	e.write("outside/dir/deep.txt", "needle deep\n")
	e.symlink("../outside/secret.txt", "root/out-file")
	e.symlink("../outside/dir", "root/out-dir")
	e.symlink("real.txt", "root/in-link")
	m := e.ok("search_text", map[string]any{"query": "needle", "include_hidden": true})
	got := hits(m)
	if len(got) != 1 || got[0].path != "real.txt" {
		t.Errorf("matches %v: symlinks must not be followed", got)
	}
}
