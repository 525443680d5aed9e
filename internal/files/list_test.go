package files

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/errcode"
)

// listTree lays out a tree of 16 entries over 4 directory levels (plus hidden
// ones) and returns the recursive listing order hostlink must produce:
// depth-first, names sorted bytewise in each directory.
func listTree(e *env) []string {
	for _, f := range []string{"a.txt", "aa.txt", "b/b1.txt", "b/b2.txt", "b/c/c1.txt", "b/c/c2.txt", "b/c/d/d1.txt",
		"b/c/d/d2.txt", "f.txt", "g/g1.txt", "z.txt", ".hidden", ".git/config", "b/.hb/x.txt"} {
		e.write("root/"+f, "content of "+f)
	}
	os.MkdirAll(filepath.Join(e.root, "e"), 0o755)
	return []string{"a.txt", "aa.txt", "b", "b/b1.txt", "b/b2.txt", "b/c", "b/c/c1.txt", "b/c/c2.txt", "b/c/d",
		"b/c/d/d1.txt", "b/c/d/d2.txt", "e", "f.txt", "g", "g/g1.txt", "z.txt"}
}

func TestListDirectory(t *testing.T) {
	e := newEnv(t, testLimits)
	all := listTree(e)
	e.write("root/B-upper.txt", "x") // 'B' < 'a' bytewise

	m := e.ok("list_directory", map[string]any{"details": true})
	got := paths(list(m, "entries"))
	want := []string{"B-upper.txt", "a.txt", "aa.txt", "b", "e", "f.txt", "g", "z.txt"}
	if !slices.Equal(got, want) {
		t.Errorf("top level = %v, want %v", got, want)
	}
	if flag(m, "truncated") || str(m, "next_cursor") != "" || str(m, "path") != "." {
		t.Errorf("result = %v", m)
	}
	byName := map[string]map[string]any{}
	for _, en := range list(m, "entries") {
		byName[str(en, "name")] = en
	}
	// With details an entry holds name, path, type, size_bytes and mtime.
	if a := byName["a.txt"]; str(a, "type") != "file" || len(a) != 5 ||
		int(num(a, "size_bytes")) != len("content of a.txt") || num(a, "mtime") <= 0 {
		t.Errorf("a.txt entry = %v", a)
	}
	if b := byName["b"]; str(b, "type") != "dir" || len(b) != 5 {
		t.Errorf("b entry = %v", b)
	}
	// Without, name, path and type: what the directory read says.
	for _, en := range list(e.ok("list_directory", map[string]any{}), "entries") {
		if len(en) != 3 || en["type"] != byName[str(en, "name")]["type"] {
			t.Errorf("entry without details = %v", en)
		}
	}

	e.ok("delete", map[string]any{"path": "B-upper.txt"})
	rec := paths(list(e.ok("list_directory", map[string]any{"recursive": true}), "entries"))
	if !slices.Equal(rec, all) {
		t.Errorf("recursive =\n%v\nwant\n%v", rec, all)
	}
	sub := paths(list(e.ok("list_directory", map[string]any{"path": "b/c", "recursive": true}), "entries"))
	if want := []string{"b/c/c1.txt", "b/c/c2.txt", "b/c/d", "b/c/d/d1.txt", "b/c/d/d2.txt"}; !slices.Equal(sub, want) {
		t.Errorf("recursive b/c = %v, want %v", sub, want)
	}
	subFlat := paths(list(e.ok("list_directory", map[string]any{"path": "b"}), "entries"))
	if want := []string{"b/b1.txt", "b/b2.txt", "b/c"}; !slices.Equal(subFlat, want) {
		t.Errorf("b = %v, want %v", subFlat, want)
	}
	empty := e.ok("list_directory", map[string]any{"path": "e"})
	if len(list(empty, "entries")) != 0 || flag(empty, "truncated") {
		t.Errorf("empty dir = %v", empty)
	}
	if num(empty, "count") != 0 {
		t.Errorf("empty dir = %v, want count 0", empty)
	}
}

func TestListDirectoryHidden(t *testing.T) {
	e := newEnv(t, testLimits)
	listTree(e)
	cases := []struct {
		name      string
		args      map[string]any
		hidden    []string // must appear
		notHidden bool     // no hidden name may appear
	}{
		{"flat default", map[string]any{}, nil, true},
		{"recursive default", map[string]any{"recursive": true}, nil, true},
		{"flat include", map[string]any{"include_hidden": true}, []string{".hidden", ".git"}, false},
		{"recursive include", map[string]any{"recursive": true, "include_hidden": true},
			[]string{".hidden", ".git", ".git/config", "b/.hb", "b/.hb/x.txt"}, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := paths(list(e.ok("list_directory", c.args), "entries"))
			for _, h := range c.hidden {
				if !slices.Contains(got, h) {
					t.Errorf("%s missing from %v", h, got)
				}
			}
			if c.notHidden {
				for _, p := range got {
					if strings.HasPrefix(p, ".") || strings.Contains(p, "/.") {
						t.Errorf("hidden %s listed", p)
					}
				}
			}
		})
	}
	// Hidden entries sort bytewise like the rest ('.' < 'a').
	got := paths(list(e.ok("list_directory", map[string]any{"include_hidden": true}), "entries"))
	if want := []string{".git", ".hidden", "a.txt", "aa.txt", "b", "e", "f.txt", "g", "z.txt"}; !slices.Equal(got, want) {
		t.Errorf("with hidden = %v, want %v", got, want)
	}
}

func TestListDirectoryGlob(t *testing.T) {
	e := newEnv(t, testLimits)
	listTree(e)
	e.write("root/README.MD", "x")
	e.write("root/b/notes.md", "x")
	fold := e.svc.workdirs[0].Root.CaseInsensitive()
	t.Logf("case-insensitive root: %v", fold)
	cases := []struct {
		name string
		args map[string]any
		want []string
	}{
		{"flat *.txt", map[string]any{"glob": "*.txt"}, []string{"a.txt", "aa.txt", "f.txt", "z.txt"}},
		{"recursive *.txt", map[string]any{"glob": "*.txt", "recursive": true},
			[]string{"a.txt", "aa.txt", "b/b1.txt", "b/b2.txt", "b/c/c1.txt", "b/c/c2.txt", "b/c/d/d1.txt", "b/c/d/d2.txt",
				"f.txt", "g/g1.txt", "z.txt"}},
		{"glob on names not paths", map[string]any{"glob": "b/*", "recursive": true}, []string{}},
		{"dirs match too", map[string]any{"glob": "?", "recursive": true}, []string{"b", "b/c", "b/c/d", "e", "g"}},
		{"class", map[string]any{"glob": "[bc][12].txt", "recursive": true},
			[]string{"b/b1.txt", "b/b2.txt", "b/c/c1.txt", "b/c/c2.txt"}},
		{"alternation", map[string]any{"glob": "{a,z}.txt"}, []string{"a.txt", "z.txt"}},
		{"exact case", map[string]any{"glob": "*.md", "recursive": true}, caseFold(fold, []string{"README.MD", "b/notes.md"}, []string{"b/notes.md"})},
		{"other case", map[string]any{"glob": "*.MD", "recursive": true}, caseFold(fold, []string{"README.MD", "b/notes.md"}, []string{"README.MD"})},
		{"upper name", map[string]any{"glob": "A.TXT"}, caseFold(fold, []string{"a.txt"}, []string{})},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := paths(list(e.ok("list_directory", c.args), "entries"))
			if !slices.Equal(got, c.want) {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
	e.fail(errcode.InvalidArgument, "list_directory", map[string]any{"glob": "[unclosed"})
}

// caseFold picks the expectation for a case-insensitive or a case-sensitive root.
func caseFold(fold bool, insensitive, sensitive []string) []string {
	if fold {
		return insensitive
	}
	return sensitive
}

func TestListDirectorySymlinks(t *testing.T) {
	e := newEnv(t, testLimits)
	e.write("root/real/inner.txt", "inner")
	e.write("root/t.txt", "t")
	e.write("outside/o/secret.txt", "secret")
	e.symlink("real", "root/dirlink")
	e.symlink("t.txt", "root/filelink")
	e.symlink("../outside/o", "root/outlink")
	e.symlink(filepath.Join(e.base, "outside", "o", "secret.txt"), "root/outabs")
	e.symlink("nothing", "root/dangling")
	e.symlink("../t.txt", "root/real/up")

	m := e.ok("list_directory", map[string]any{"recursive": true, "details": true})
	got := paths(list(m, "entries"))
	want := []string{"dangling", "dirlink", "filelink", "outabs", "outlink", "real", "real/inner.txt", "real/up", "t.txt"}
	if !slices.Equal(got, want) {
		t.Errorf("recursive listing = %v, want %v (symlinked dirs must not be descended)", got, want)
	}
	byPath := map[string]map[string]any{}
	for _, en := range list(m, "entries") {
		byPath[str(en, "path")] = en
	}
	inside := map[string]string{"dirlink": "real", "filelink": "t.txt", "dangling": "nothing", "real/up": "t.txt"}
	for p, target := range inside {
		en := byPath[p]
		if str(en, "type") != "symlink" {
			t.Errorf("%s: %v", p, en)
		}
		if str(en, "link_target") != target || flag(en, "link_outside") {
			t.Errorf("%s: link_target %q link_outside %v, want %q", p, str(en, "link_target"), en["link_outside"], target)
		}
	}
	for _, p := range []string{"outlink", "outabs"} {
		en := byPath[p]
		if str(en, "type") != "symlink" || !flag(en, "link_outside") {
			t.Errorf("%s: %v, want link_outside", p, en)
		}
		if _, has := en["link_target"]; has {
			t.Errorf("%s reveals its target: %v", p, en)
		}
	}
	// Listing through a link that stays inside lists its target, with
	// names relative to the path asked for.
	got = paths(list(e.ok("list_directory", map[string]any{"path": "dirlink"}), "entries"))
	if want := []string{"dirlink/inner.txt", "dirlink/up"}; !slices.Equal(got, want) {
		t.Errorf("list dirlink = %v, want %v", got, want)
	}
	e.fail(errcode.PathOutsideRoot, "list_directory", map[string]any{"path": "outlink"})
	e.fail(errcode.NotADirectory, "list_directory", map[string]any{"path": "filelink"})
}

// pageAll lists with args page by page, returning every page's paths.
// A truncated page must hold min(size, limit) entries.
func pageAll(t *testing.T, e *env, op, key string, args map[string]any, size, limit int) [][]string {
	t.Helper()
	var pages [][]string
	cursor := ""
	for i := 0; ; i++ {
		if i > 100 {
			t.Fatal("pagination does not end")
		}
		a := map[string]any{}
		for k, v := range args {
			a[k] = v
		}
		if op == "find_files" {
			a["max_results"] = size
		} else {
			a["max_entries"] = size
		}
		if cursor != "" {
			a["cursor"] = cursor
		}
		m := e.ok(op, a)
		page := paths(list(m, key))
		if len(page) > size {
			t.Fatalf("page of %d entries for a page size of %d", len(page), size)
		}
		pages = append(pages, page)
		if flag(m, "truncated") != (str(m, "next_cursor") != "") {
			t.Fatalf("truncated %v with next_cursor %q", m["truncated"], str(m, "next_cursor"))
		}
		if !flag(m, "truncated") {
			return pages
		}
		if len(page) != min(size, limit) {
			t.Fatalf("a truncated page holds %d entries, want %d", len(page), min(size, limit))
		}
		cursor = str(m, "next_cursor")
	}
}

func TestListDirectoryPagination(t *testing.T) {
	e := newEnv(t, testLimits)
	all := listTree(e)
	cases := []struct {
		name string
		args map[string]any
	}{
		{"recursive", map[string]any{"recursive": true}},
		{"flat", map[string]any{}},
		{"recursive hidden", map[string]any{"recursive": true, "include_hidden": true}},
		{"recursive glob", map[string]any{"recursive": true, "glob": "*[12]*"}},
		{"subdirectory", map[string]any{"path": "b", "recursive": true}},
	}
	for _, c := range cases {
		full := paths(list(e.ok("list_directory", c.args), "entries"))
		if c.name == "recursive" && !slices.Equal(full, all) {
			t.Fatalf("unpaginated listing = %v, want %v", full, all)
		}
		for size := 1; size <= len(full)+1; size++ {
			t.Run(c.name+"/"+string(rune('0'+size/10))+string(rune('0'+size%10)), func(t *testing.T) {
				pages := pageAll(t, e, "list_directory", "entries", c.args, size, 100)
				got := slices.Concat(pages...)
				if !slices.Equal(got, full) {
					t.Errorf("pages of %d: %v\nconcatenated %v\nwant %v", size, pages, got, full)
				}
			})
		}
	}
}

func TestListDirectoryCursorStable(t *testing.T) {
	e := newEnv(t, testLimits)
	listTree(e)
	// A page that ends on a directory: the next page starts inside it.
	m := e.ok("list_directory", map[string]any{"recursive": true, "max_entries": 3})
	if got := paths(list(m, "entries")); !slices.Equal(got, []string{"a.txt", "aa.txt", "b"}) {
		t.Fatalf("page 1 = %v", got)
	}
	m = e.ok("list_directory", map[string]any{"recursive": true, "max_entries": 3, "cursor": str(m, "next_cursor")})
	if got := paths(list(m, "entries")); !slices.Equal(got, []string{"b/b1.txt", "b/b2.txt", "b/c"}) {
		t.Fatalf("page 2 = %v", got)
	}
	m = e.ok("list_directory", map[string]any{"recursive": true, "max_entries": 4, "cursor": str(m, "next_cursor")})
	if got := paths(list(m, "entries")); !slices.Equal(got, []string{"b/c/c1.txt", "b/c/c2.txt", "b/c/d", "b/c/d/d1.txt"}) {
		t.Fatalf("page 3 = %v", got)
	}

	// Pages come from what the first page read: entries added since are
	// not listed; one removed since is, without details, and with
	// details (which describe each entry as the page is made) is not.
	m = e.ok("list_directory", map[string]any{"recursive": true, "max_entries": 4})
	if got := paths(list(m, "entries")); !slices.Equal(got, []string{"a.txt", "aa.txt", "b", "b/b1.txt"}) {
		t.Fatalf("page 1 = %v", got)
	}
	md := e.ok("list_directory", map[string]any{"recursive": true, "max_entries": 4, "details": true})
	e.write("root/0-new.txt", "x")
	e.write("root/b/b0.txt", "x")
	os.Remove(filepath.Join(e.root, "b", "b2.txt"))
	e.write("root/b/b15.txt", "x")
	m = e.ok("list_directory", map[string]any{"recursive": true, "max_entries": 4, "cursor": str(m, "next_cursor")})
	if got := paths(list(m, "entries")); !slices.Equal(got, []string{"b/b2.txt", "b/c", "b/c/c1.txt", "b/c/c2.txt"}) {
		t.Errorf("page 2 after changes = %v", got)
	}
	md = e.ok("list_directory", map[string]any{"recursive": true, "max_entries": 4, "details": true, "cursor": str(md, "next_cursor")})
	if got := paths(list(md, "entries")); !slices.Equal(got, []string{"b/c", "b/c/c1.txt", "b/c/c2.txt"}) {
		t.Errorf("page 2 with details after changes = %v", got)
	}
	// A flat listing's cursor on a directory does not descend into it.
	m = e.ok("list_directory", map[string]any{"max_entries": 4})
	if got := paths(list(m, "entries")); !slices.Equal(got, []string{"0-new.txt", "a.txt", "aa.txt", "b"}) {
		t.Fatalf("flat page 1 = %v", got)
	}
	m = e.ok("list_directory", map[string]any{"max_entries": 3, "cursor": str(m, "next_cursor")})
	if got := paths(list(m, "entries")); !slices.Equal(got, []string{"e", "f.txt", "g"}) {
		t.Errorf("flat page 2 = %v", got)
	}
}

func TestListDirectoryLimit(t *testing.T) {
	e := newEnv(t, smallLimits) // MaxListEntries 5
	for _, n := range []string{"1", "2", "3", "4", "5"} {
		e.write("root/five/"+n, n)
	}
	for _, n := range []string{"1", "2", "3", "4", "5", "6", "7", "8"} {
		e.write("root/eight/"+n, n)
	}
	cases := []struct {
		name, dir string
		max       int
		want      int
		truncated bool
	}{
		{"at the limit, exactly enough", "five", 5, 5, false},
		{"default, exactly enough", "five", 0, 5, false},
		{"past the limit, exactly enough", "five", 6, 5, false},
		{"below the limit", "eight", 4, 4, true},
		{"at the limit", "eight", 5, 5, true},
		{"past the limit is capped", "eight", 6, 5, true},
		{"far past the limit is capped", "eight", 1000, 5, true},
		{"default is the limit", "eight", 0, 5, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := map[string]any{"path": c.dir}
			if c.max != 0 {
				args["max_entries"] = c.max
			}
			m := e.ok("list_directory", args)
			if n := len(list(m, "entries")); n != c.want || flag(m, "truncated") != c.truncated {
				t.Errorf("%d entries, truncated %v; want %d, %v", n, m["truncated"], c.want, c.truncated)
			}
		})
	}
	pages := pageAll(t, e, "list_directory", "entries", map[string]any{"path": "eight"}, 100, 5)
	if got := slices.Concat(pages...); len(pages) != 2 || len(got) != 8 {
		t.Errorf("capped pages %v", pages)
	}
	// find_files' max_results is capped by the same limit.
	for _, c := range []struct{ max, want int }{{4, 4}, {5, 5}, {6, 5}, {0, 5}} {
		args := map[string]any{"path": "eight", "pattern": "*"}
		if c.max != 0 {
			args["max_results"] = c.max
		}
		m := e.ok("find_files", args)
		if n := len(list(m, "matches")); n != c.want || !flag(m, "truncated") {
			t.Errorf("find_files max_results %d: %d matches, truncated %v; want %d, true", c.max, n, m["truncated"], c.want)
		}
	}
	m := e.ok("find_files", map[string]any{"path": "five", "pattern": "*", "max_results": 6})
	if n := len(list(m, "matches")); n != 5 || flag(m, "truncated") {
		t.Errorf("find_files of exactly the limit: %d matches, truncated %v", n, m["truncated"])
	}
}

func TestListDirectoryErrors(t *testing.T) {
	e := newEnv(t, testLimits)
	listTree(e)
	enc := func(s string) string { return base64.RawURLEncoding.EncodeToString([]byte(s)) }
	// Cursors are the server's: a made-up one (or one of the former
	// kind, the last path base64-encoded) is unknown.
	cases := []struct {
		name string
		args map[string]any
		want errcode.Code
	}{
		{"file", map[string]any{"path": "a.txt"}, errcode.NotADirectory},
		{"missing", map[string]any{"path": "nope"}, errcode.PathNotFound},
		{"cursor not base64", map[string]any{"cursor": "!!!"}, errcode.CursorExpired},
		{"cursor with ..", map[string]any{"cursor": enc("../x")}, errcode.CursorExpired},
		{"former cursor", map[string]any{"cursor": enc("b")}, errcode.CursorExpired},
		{"cursor .", map[string]any{"cursor": enc(".")}, errcode.CursorExpired},
		{"unknown workdir", map[string]any{"workdir": "x"}, errcode.UnknownWorkdir},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { e.fail(c.want, "list_directory", c.args) })
	}
}

func TestFindFiles(t *testing.T) {
	e := newEnv(t, testLimits)
	for _, f := range []string{"main.go", "cmd/x/main.go", "cmd/x/main_test.go", "internal/a/a.go", "internal/a/b/c/deep.go",
		"internal/a/readme.md", "docs/x.md", ".hidden/h.go", "internal/.h.go", "go.mod"} {
		e.write("root/"+f, "package x")
	}
	fold := e.svc.workdirs[0].Root.CaseInsensitive()
	cases := []struct {
		name string
		args map[string]any
		want []string
	}{
		{"**/*.go", map[string]any{"pattern": "**/*.go"},
			[]string{"cmd/x/main.go", "cmd/x/main_test.go", "internal/a/a.go", "internal/a/b/c/deep.go", "main.go"}},
		{"*.go is top level only", map[string]any{"pattern": "*.go"}, []string{"main.go"}},
		{"relative to path", map[string]any{"path": "internal", "pattern": "a/*.go"}, []string{"internal/a/a.go"}},
		{"** relative to path", map[string]any{"path": "internal/a", "pattern": "**/*.go"},
			[]string{"internal/a/a.go", "internal/a/b/c/deep.go"}},
		{"path prefix not repeated", map[string]any{"path": "internal", "pattern": "internal/**"}, []string{}},
		{"./ prefix", map[string]any{"pattern": "./cmd/*/*.go"}, []string{"cmd/x/main.go", "cmd/x/main_test.go"}},
		{"hidden excluded", map[string]any{"pattern": "**/*.go", "path": "internal"},
			[]string{"internal/a/a.go", "internal/a/b/c/deep.go"}},
		{"hidden included", map[string]any{"pattern": "**/*.go", "include_hidden": true},
			[]string{".hidden/h.go", "cmd/x/main.go", "cmd/x/main_test.go", "internal/.h.go", "internal/a/a.go",
				"internal/a/b/c/deep.go", "main.go"}},
		{"directories match", map[string]any{"pattern": "internal/*/b"}, []string{"internal/a/b"}},
		{"md", map[string]any{"pattern": "**/*.md"}, []string{"docs/x.md", "internal/a/readme.md"}},
		{"case", map[string]any{"pattern": "**/*.GO"}, caseFold(fold,
			[]string{"cmd/x/main.go", "cmd/x/main_test.go", "internal/a/a.go", "internal/a/b/c/deep.go", "main.go"}, []string{})},
		{"no match", map[string]any{"pattern": "**/*.rs"}, []string{}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			got := paths(list(e.ok("find_files", c.args), "matches"))
			if !slices.Equal(got, c.want) {
				t.Errorf("got %v, want %v", got, c.want)
			}
		})
	}
	t.Run("pagination", func(t *testing.T) {
		args := map[string]any{"pattern": "**", "include_hidden": true}
		full := paths(list(e.ok("find_files", args), "matches"))
		if len(full) < 15 {
			t.Fatalf("** found only %v", full)
		}
		for size := 1; size <= len(full)+1; size++ {
			pages := pageAll(t, e, "find_files", "matches", args, size, 100)
			if got := slices.Concat(pages...); !slices.Equal(got, full) {
				t.Errorf("pages of %d: %v\nconcatenated %v\nwant %v", size, pages, got, full)
			}
		}
		pages := pageAll(t, e, "find_files", "matches", map[string]any{"pattern": "**/*.go"}, 2, 100)
		if got := slices.Concat(pages...); len(pages) != 3 || len(got) != 5 {
			t.Errorf("**/*.go in pages of 2: %v", pages)
		}
	})
	for _, bad := range []map[string]any{{"pattern": "[a"}, {"pattern": ""}, {"pattern": "{a,b"}, {}} {
		e.fail(errcode.InvalidArgument, "find_files", bad)
	}
	e.fail(errcode.NotADirectory, "find_files", map[string]any{"path": "main.go", "pattern": "*"})
	e.fail(errcode.PathNotFound, "find_files", map[string]any{"path": "nope", "pattern": "*"})
}
