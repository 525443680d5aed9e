package files

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hostlink/hostlink/internal/errcode"
)

func isDir(e *env, rel string) bool {
	fi, err := os.Lstat(filepath.Join(e.base, filepath.FromSlash(rel)))
	return err == nil && fi.IsDir()
}

func TestCreateDirectory(t *testing.T) {
	e := newEnv(t, testLimits)
	e.write("root/file.txt", "f")
	os.MkdirAll(filepath.Join(e.root, "have"), 0o755)
	cases := []struct {
		name    string
		args    map[string]any
		want    errcode.Code
		created bool
		check   string // a directory that must exist afterwards
	}{
		{"one level", map[string]any{"path": "new"}, "", true, "root/new"},
		{"with parents by default", map[string]any{"path": "p/q/r"}, "", true, "root/p/q/r"},
		{"with parents explicitly", map[string]any{"path": "s/t", "parents": true}, "", true, "root/s/t"},
		{"parents=false, parent exists", map[string]any{"path": "have/one", "parents": false}, "", true, "root/have/one"},
		{"parents=false, parent missing", map[string]any{"path": "x/y", "parents": false}, errcode.PathNotFound, false, ""},
		{"existing directory", map[string]any{"path": "have"}, "", false, "root/have"},
		{"existing directory, parents=false", map[string]any{"path": "have", "parents": false}, "", false, "root/have"},
		{"the root", map[string]any{"path": "."}, "", false, "root"},
		{"existing file", map[string]any{"path": "file.txt"}, errcode.PathExists, false, ""},
		{"below a file", map[string]any{"path": "file.txt/sub"}, errcode.NotADirectory, false, ""},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m, code := e.call("create_directory", c.args)
			if code != c.want && !(c.name == "below a file" && !unix() && code == errcode.PathNotFound) {
				t.Fatalf("code %q, want %q", code, c.want)
			}
			if code != "" {
				return
			}
			if flag(m, "created") != c.created {
				t.Errorf("created = %v, want %v", m["created"], c.created)
			}
			if !isDir(e, c.check) {
				t.Errorf("%s is not a directory", c.check)
			}
		})
	}
	if e.exists("root/x") {
		t.Error("parents=false created the missing parent")
	}
	if e.mustRead("root/file.txt") != "f" {
		t.Error("file.txt changed")
	}
}

func TestCreateDirectorySymlink(t *testing.T) {
	e := newEnv(t, testLimits)
	os.MkdirAll(filepath.Join(e.root, "have"), 0o755)
	e.write("outside/keep.txt", "k")
	e.symlink("have", "root/havelink")
	e.symlink("../outside", "root/outlink")
	m := e.ok("create_directory", map[string]any{"path": "havelink/via"})
	if !flag(m, "created") || !isDir(e, "root/have/via") {
		t.Errorf("create below a dir link: %v", m)
	}
	if m := e.ok("create_directory", map[string]any{"path": "havelink"}); flag(m, "created") {
		t.Errorf("an existing linked dir reported created: %v", m)
	}
	e.fail(errcode.PathOutsideRoot, "create_directory", map[string]any{"path": "outlink/new"})
	if e.exists("outside/new") {
		t.Error("create_directory through an outside link created outside/new")
	}
}

func TestDelete(t *testing.T) {
	cases := []struct {
		name     string
		args     map[string]any
		want     errcode.Code
		deleted  bool
		gone     []string // below base, must not exist afterwards
		kept     []string // below base, must still exist
		symlinks bool
	}{
		{"file", map[string]any{"path": "f.txt"}, "", true, []string{"root/f.txt"}, []string{"root/full/a.txt"}, false},
		{"empty dir", map[string]any{"path": "empty"}, "", true, []string{"root/empty"}, nil, false},
		{"non-empty dir without recursive", map[string]any{"path": "full"}, errcode.PathNotEmpty, false, nil,
			[]string{"root/full/a.txt", "root/full/sub/b.txt"}, false},
		{"recursive", map[string]any{"path": "full", "recursive": true}, "", true, []string{"root/full"}, []string{"root/f.txt"}, false},
		{"recursive on a file", map[string]any{"path": "f.txt", "recursive": true}, "", true, []string{"root/f.txt"}, nil, false},
		{"nested file", map[string]any{"path": "full/sub/b.txt"}, "", true, []string{"root/full/sub/b.txt"}, []string{"root/full/a.txt"}, false},
		{"missing", map[string]any{"path": "nope"}, errcode.PathNotFound, false, nil, nil, false},
		{"missing, missing_ok", map[string]any{"path": "nope", "missing_ok": true}, "", false, nil, nil, false},
		{"missing parent, missing_ok", map[string]any{"path": "no/such/thing", "missing_ok": true}, "", false, nil, nil, false},
		{"root .", map[string]any{"path": "."}, errcode.InvalidArgument, false, nil, []string{"root/f.txt"}, false},
		{"root ., recursive", map[string]any{"path": ".", "recursive": true}, errcode.InvalidArgument, false, nil, []string{"root/f.txt", "root/full/a.txt"}, false},
		{"root absolute", map[string]any{"path": "<root>", "recursive": true}, errcode.InvalidArgument, false, nil, []string{"root/f.txt"}, false},
		{"root via ..", map[string]any{"path": "full/..", "recursive": true}, errcode.InvalidArgument, false, nil, []string{"root/f.txt"}, false},
		{"symlink to a file inside", map[string]any{"path": "flink"}, "", true, []string{"root/flink"}, []string{"root/f.txt"}, true},
		{"symlink to a dir inside", map[string]any{"path": "dlink", "recursive": true}, "", true, []string{"root/dlink"},
			[]string{"root/full/a.txt", "root/full/sub/b.txt"}, true},
		{"dir holding a symlink to outside", map[string]any{"path": "holder", "recursive": true}, "", true,
			[]string{"root/holder"}, []string{"outside/o/secret.txt", "outside/o"}, true},
		{"symlink to outside itself", map[string]any{"path": "holder/out", "recursive": true}, errcode.PathOutsideRoot, false, nil,
			[]string{"root/holder/out", "outside/o/secret.txt"}, true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, testLimits)
			e.write("root/f.txt", "f")
			e.write("root/full/a.txt", "a")
			e.write("root/full/sub/b.txt", "b")
			os.MkdirAll(filepath.Join(e.root, "empty"), 0o755)
			if c.symlinks {
				e.write("outside/o/secret.txt", "secret")
				os.MkdirAll(filepath.Join(e.root, "holder"), 0o755)
				e.symlink("f.txt", "root/flink")
				e.symlink("full", "root/dlink")
				e.symlink("../../outside/o", "root/holder/out")
				e.symlink(filepath.Join(e.base, "outside", "o", "secret.txt"), "root/holder/outabs")
			}
			args := map[string]any{}
			for k, v := range c.args {
				args[k] = v
			}
			if args["path"] == "<root>" {
				args["path"] = e.root
			}
			m, code := e.call("delete", args)
			if code != c.want {
				t.Fatalf("code %q, want %q", code, c.want)
			}
			if code == "" && flag(m, "deleted") != c.deleted {
				t.Errorf("deleted = %v, want %v", m["deleted"], c.deleted)
			}
			for _, g := range c.gone {
				if e.exists(g) {
					t.Errorf("%s still exists", g)
				}
			}
			for _, k := range c.kept {
				if !e.exists(k) {
					t.Errorf("%s was removed", k)
				}
			}
			if s, ok := e.read("outside/o/secret.txt"); c.symlinks && (!ok || s != "secret") {
				t.Error("outside file changed")
			}
			if !isDir(e, "root") {
				t.Error("the workdir root is gone")
			}
		})
	}
}

func TestMove(t *testing.T) {
	cases := []struct {
		name     string
		args     map[string]any
		want     errcode.Code
		replaced bool
		files    map[string]string // below base: content afterwards ("" = must not exist, "<dir>" = a directory)
	}{
		{"rename file", map[string]any{"src": "a.txt", "dst": "renamed.txt"}, "", false,
			map[string]string{"root/a.txt": "", "root/renamed.txt": "A"}},
		{"into a subdirectory", map[string]any{"src": "a.txt", "dst": "d/a.txt"}, "", false,
			map[string]string{"root/a.txt": "", "root/d/a.txt": "A"}},
		{"move dir", map[string]any{"src": "d", "dst": "moved"}, "", false,
			map[string]string{"root/d": "", "root/moved/in.txt": "IN", "root/moved/deep/x.txt": "X"}},
		{"dir into a dir", map[string]any{"src": "d", "dst": "e/d"}, "", false,
			map[string]string{"root/d": "", "root/e/d/in.txt": "IN"}},
		{"dst exists", map[string]any{"src": "a.txt", "dst": "b.txt"}, errcode.PathExists, false,
			map[string]string{"root/a.txt": "A", "root/b.txt": "B"}},
		{"dst exists, overwrite", map[string]any{"src": "a.txt", "dst": "b.txt", "overwrite": true}, "", true,
			map[string]string{"root/a.txt": "", "root/b.txt": "A"}},
		{"dir over empty dir, overwrite", map[string]any{"src": "d", "dst": "e", "overwrite": true}, "", true,
			map[string]string{"root/d": "", "root/e/in.txt": "IN"}},
		{"dir over non-empty dir, overwrite", map[string]any{"src": "e", "dst": "d", "overwrite": true}, errcode.PathNotEmpty, false,
			map[string]string{"root/e": "<dir>", "root/d/in.txt": "IN", "root/d/deep/x.txt": "X"}},
		{"dir over dir without overwrite", map[string]any{"src": "d", "dst": "e"}, errcode.PathExists, false,
			map[string]string{"root/d/in.txt": "IN", "root/e": "<dir>"}},
		{"file over dir", map[string]any{"src": "a.txt", "dst": "e", "overwrite": true}, errcode.Conflict, false,
			map[string]string{"root/a.txt": "A", "root/e": "<dir>"}},
		{"dir over file", map[string]any{"src": "d", "dst": "b.txt", "overwrite": true}, errcode.Conflict, false,
			map[string]string{"root/d/in.txt": "IN", "root/b.txt": "B"}},
		{"missing src", map[string]any{"src": "nope", "dst": "x"}, errcode.PathNotFound, false,
			map[string]string{"root/x": ""}},
		{"missing dst parent", map[string]any{"src": "a.txt", "dst": "no/such/x"}, errcode.PathNotFound, false,
			map[string]string{"root/a.txt": "A"}},
		{"dir into itself", map[string]any{"src": "d", "dst": "d/deep/d"}, errcode.InvalidArgument, false,
			map[string]string{"root/d/in.txt": "IN", "root/d/deep/x.txt": "X", "root/d/deep/d": ""}},
		{"dir into itself, overwrite", map[string]any{"src": "d", "dst": "d/deep", "overwrite": true}, errcode.InvalidArgument, false,
			map[string]string{"root/d/in.txt": "IN", "root/d/deep/x.txt": "X"}},
		{"dir to a sibling sharing its prefix", map[string]any{"src": "d", "dst": "dd"}, "", false,
			map[string]string{"root/d": "", "root/dd/in.txt": "IN"}},
		{"root as src", map[string]any{"src": ".", "dst": "x"}, errcode.InvalidArgument, false,
			map[string]string{"root/a.txt": "A"}},
		{"root as dst", map[string]any{"src": "a.txt", "dst": ".", "overwrite": true}, errcode.InvalidArgument, false,
			map[string]string{"root/a.txt": "A"}},
		{"across workdirs", map[string]any{"src": "a.txt", "dst": "got.txt", "dst_workdir": "second"}, "", false,
			map[string]string{"root/a.txt": "", "w2/got.txt": "A"}},
		{"across workdirs by absolute path", map[string]any{"src": "a.txt", "dst": "<w2>/abs.txt"}, "", false,
			map[string]string{"root/a.txt": "", "w2/abs.txt": "A"}},
		{"across workdirs, dst exists", map[string]any{"src": "a.txt", "dst": "have.txt", "dst_workdir": "second"},
			errcode.PathExists, false, map[string]string{"root/a.txt": "A", "w2/have.txt": "HAVE"}},
		{"across workdirs, overwrite", map[string]any{"src": "a.txt", "dst": "have.txt", "dst_workdir": "second", "overwrite": true},
			"", true, map[string]string{"root/a.txt": "", "w2/have.txt": "A"}},
		{"across workdirs, nested dst", map[string]any{"src": "b.txt", "dst": "sub2/b.txt", "dst_workdir": "second"},
			"", false, map[string]string{"root/b.txt": "", "w2/sub2/b.txt": "B"}},
		{"across workdirs, missing dst parent", map[string]any{"src": "b.txt", "dst": "nosub/b.txt", "dst_workdir": "second"},
			errcode.PathNotFound, false, map[string]string{"root/b.txt": "B", "w2/nosub": ""}},
		{"across workdirs, file over dir", map[string]any{"src": "a.txt", "dst": "sub2", "dst_workdir": "second", "overwrite": true},
			errcode.Conflict, false, map[string]string{"root/a.txt": "A", "w2/sub2": "<dir>"}},
		{"back from the second workdir", map[string]any{"workdir": "second", "src": "have.txt", "dst": "back.txt", "dst_workdir": "main"},
			"", false, map[string]string{"w2/have.txt": "", "root/back.txt": "HAVE"}},
		{"within the second workdir", map[string]any{"workdir": "second", "src": "have.txt", "dst": "renamed.txt"},
			"", false, map[string]string{"w2/have.txt": "", "w2/renamed.txt": "HAVE", "root/renamed.txt": ""}},
		{"dir across workdirs", map[string]any{"src": "d", "dst": "d", "dst_workdir": "second"}, errcode.InvalidArgument, false,
			map[string]string{"root/d/in.txt": "IN", "w2/d": ""}},
		{"into a read-only workdir", map[string]any{"src": "a.txt", "dst": "a.txt", "dst_workdir": "ro"}, errcode.ReadOnly, false,
			map[string]string{"root/a.txt": "A", "ro/a.txt": ""}},
		{"out of a read-only workdir", map[string]any{"workdir": "ro", "src": "r.txt", "dst": "r.txt", "dst_workdir": "main"},
			errcode.ReadOnly, false, map[string]string{"ro/r.txt": "R", "root/r.txt": ""}},
		{"within a read-only workdir", map[string]any{"workdir": "ro", "src": "r.txt", "dst": "s.txt"},
			errcode.ReadOnly, false, map[string]string{"ro/r.txt": "R", "ro/s.txt": ""}},
		{"unknown dst workdir", map[string]any{"src": "a.txt", "dst": "x", "dst_workdir": "nope"}, errcode.UnknownWorkdir, false,
			map[string]string{"root/a.txt": "A"}},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, testLimits, extraWorkdir{alias: "second", dir: "w2"}, extraWorkdir{alias: "ro", dir: "ro", readOnly: true})
			e.write("root/a.txt", "A")
			e.write("root/b.txt", "B")
			e.write("root/d/in.txt", "IN")
			e.write("root/d/deep/x.txt", "X")
			os.MkdirAll(filepath.Join(e.root, "e"), 0o755)
			e.write("w2/have.txt", "HAVE")
			os.MkdirAll(filepath.Join(e.base, "w2", "sub2"), 0o755)
			e.write("ro/r.txt", "R")
			args := map[string]any{}
			for k, v := range c.args {
				args[k] = v
			}
			if args["dst"] == "<w2>/abs.txt" {
				args["dst"] = filepath.Join(e.base, "w2", "abs.txt")
			}
			m, code := e.call("move", args)
			if code != c.want {
				t.Fatalf("code %q, want %q", code, c.want)
			}
			if code == "" && flag(m, "replaced") != c.replaced {
				t.Errorf("replaced = %v, want %v", m["replaced"], c.replaced)
			}
			for p, want := range c.files {
				switch want {
				case "":
					if e.exists(p) {
						t.Errorf("%s exists", p)
					}
				case "<dir>":
					if !isDir(e, p) {
						t.Errorf("%s is not a directory", p)
					}
				default:
					if got, ok := e.read(p); !ok || got != want {
						t.Errorf("%s = %q (exists %v), want %q", p, got, ok, want)
					}
				}
			}
			e.noTemps()
		})
	}
}

func TestMoveResult(t *testing.T) {
	e := newEnv(t, testLimits, extraWorkdir{alias: "second", dir: "w2"})
	e.write("root/a.txt", "A")
	m := e.ok("move", map[string]any{"src": "a.txt", "dst": "sub/../b.txt"})
	if str(m, "workdir") != "main" || str(m, "src") != "a.txt" || str(m, "dst") != "b.txt" || str(m, "dst_workdir") != "main" {
		t.Errorf("result = %v", m)
	}
	m = e.ok("move", map[string]any{"src": "b.txt", "dst": "c.txt", "dst_workdir": "second"})
	if str(m, "dst_workdir") != "second" || str(m, "dst") != "c.txt" {
		t.Errorf("result = %v", m)
	}
}

func TestMoveSymlinks(t *testing.T) {
	e := newEnv(t, testLimits)
	e.write("root/t.txt", "T")
	e.write("outside/secret.txt", "S")
	e.symlink("t.txt", "root/link")
	e.symlink("../outside/secret.txt", "root/out")
	// Moving a link that stays inside moves the link, not its target.
	e.ok("move", map[string]any{"src": "link", "dst": "link2"})
	if fi, err := os.Lstat(filepath.Join(e.root, "link2")); err != nil || fi.Mode()&os.ModeSymlink == 0 {
		t.Errorf("link2 is not a symlink: %v", err)
	}
	if e.mustRead("root/t.txt") != "T" || e.exists("root/link") {
		t.Error("moving the link touched its target or left it")
	}
	// A directory into itself through a link to it.
	e.write("root/sub/f.txt", "F")
	e.symlink("sub", "root/sublink")
	e.fail(errcode.InvalidArgument, "move", map[string]any{"src": "sub", "dst": "sublink/inner"})
	if e.mustRead("root/sub/f.txt") != "F" {
		t.Error("a refused move into itself changed sub")
	}
	e.fail(errcode.PathOutsideRoot, "move", map[string]any{"src": "out", "dst": "out2"})
	if !e.exists("root/out") || e.mustRead("outside/secret.txt") != "S" {
		t.Error("a refused move of an outside link changed something")
	}
}

// TestReadOnlyWorkdir runs every mutating operation against a read-only
// workdir and checks each is refused with READ_ONLY and the disk unchanged.
func TestReadOnlyWorkdir(t *testing.T) {
	e := newEnv(t, testLimits, extraWorkdir{alias: "ro", dir: "ro", readOnly: true})
	e.write("ro/f.txt", "original")
	e.write("ro/dir/g.txt", "g")
	os.MkdirAll(filepath.Join(e.base, "ro", "empty"), 0o755)
	e.write("root/m.txt", "main")
	roAbs := filepath.Join(e.base, "ro")
	before := snapshot(t, roAbs)
	mainBefore := snapshot(t, e.root)
	cases := []struct {
		op   string
		args map[string]any
	}{
		{"write_file", map[string]any{"workdir": "ro", "path": "f.txt", "content": "x"}},
		{"write_file", map[string]any{"workdir": "ro", "path": "new.txt", "content": "x"}},
		{"write_file", map[string]any{"workdir": "ro", "path": "f.txt", "content": "x", "mode": "overwrite"}},
		{"write_file", map[string]any{"workdir": "ro", "path": "a/b.txt", "content": "x", "create_parents": true}},
		{"write_file", map[string]any{"path": filepath.Join(roAbs, "f.txt"), "content": "x"}},
		{"edit_file", map[string]any{"workdir": "ro", "path": "f.txt", "edits": edits("original", "x")}},
		{"edit_file", map[string]any{"path": filepath.Join(roAbs, "f.txt"), "edits": edits("original", "x")}},
		{"create_directory", map[string]any{"workdir": "ro", "path": "newdir"}},
		{"create_directory", map[string]any{"workdir": "ro", "path": "x/y/z"}},
		{"create_directory", map[string]any{"workdir": "ro", "path": "dir"}},
		{"delete", map[string]any{"workdir": "ro", "path": "f.txt"}},
		{"delete", map[string]any{"workdir": "ro", "path": "dir", "recursive": true}},
		{"delete", map[string]any{"workdir": "ro", "path": "empty"}},
		{"delete", map[string]any{"workdir": "ro", "path": "missing", "missing_ok": true}},
		{"delete", map[string]any{"path": filepath.Join(roAbs, "f.txt")}},
		{"move", map[string]any{"workdir": "ro", "src": "f.txt", "dst": "g.txt"}},
		{"move", map[string]any{"workdir": "ro", "src": "dir", "dst": "dir2"}},
		{"move", map[string]any{"workdir": "ro", "src": "f.txt", "dst": "m2.txt", "dst_workdir": "main"}},
		{"move", map[string]any{"src": "m.txt", "dst": "m.txt", "dst_workdir": "ro"}},
		{"move", map[string]any{"src": "m.txt", "dst": filepath.Join(roAbs, "m.txt")}},
		{"move", map[string]any{"src": "m.txt", "dst": "f.txt", "dst_workdir": "ro", "overwrite": true}},
	}
	for _, c := range cases {
		_, code := e.call(c.op, c.args)
		if code != errcode.ReadOnly {
			t.Errorf("%s %v: code %q, want READ_ONLY", c.op, c.args, code)
		}
	}
	if after := snapshot(t, roAbs); after != before {
		t.Errorf("read-only workdir changed:\nbefore:\n%s\nafter:\n%s", before, after)
	}
	if after := snapshot(t, e.root); after != mainBefore {
		t.Errorf("main workdir changed:\nbefore:\n%s\nafter:\n%s", mainBefore, after)
	}
	// Reads still work.
	if m := e.ok("read_file", map[string]any{"workdir": "ro", "path": "f.txt"}); str(m, "content") != "original" {
		t.Errorf("read in a read-only workdir: %v", m)
	}
	e.ok("stat", map[string]any{"workdir": "ro", "path": "dir"})
	e.ok("list_directory", map[string]any{"workdir": "ro", "recursive": true})
	e.ok("find_files", map[string]any{"workdir": "ro", "pattern": "**"})
	e.ok("search_text", map[string]any{"workdir": "ro", "query": "original"})
}

func TestMoveAcrossWorkdirsLimit(t *testing.T) {
	e := newEnv(t, smallLimits, extraWorkdir{alias: "second", dir: "w2"}) // MaxWriteBytes 16
	at := "0123456789abcdef"
	e.write("root/at.txt", at)
	e.write("root/past.txt", at+"g")
	e.ok("move", map[string]any{"src": "at.txt", "dst": "at.txt", "dst_workdir": "second"})
	if e.mustRead("w2/at.txt") != at || e.exists("root/at.txt") {
		t.Error("a move of a file at the write limit failed")
	}
	e.fail(errcode.FileTooLarge, "move", map[string]any{"src": "past.txt", "dst": "past.txt", "dst_workdir": "second"})
	if e.mustRead("root/past.txt") != at+"g" || e.exists("w2/past.txt") {
		t.Error("a refused move past the write limit changed something")
	}
	// Within one workdir there is no copy, so no limit.
	e.ok("move", map[string]any{"src": "past.txt", "dst": "renamed.txt"})
	e.noTemps()
}

func TestMoveCaseOnly(t *testing.T) {
	e := newEnv(t, testLimits)
	if !e.svc.workdirs[0].Root.CaseInsensitive() {
		t.Skip("the root is case-sensitive")
	}
	names := func() []string {
		des, _ := os.ReadDir(e.root)
		var out []string
		for _, d := range des {
			out = append(out, d.Name())
		}
		return out
	}
	e.write("root/Case.txt", "content")
	os.MkdirAll(filepath.Join(e.root, "EmptyDir"), 0o755)
	// A new spelling of the same name is a rename, not a replacement: no
	// overwrite needed, nothing reported replaced, nothing lost.
	if res := e.ok("move", map[string]any{"src": "Case.txt", "dst": "case.txt"}); res["replaced"] != false {
		t.Errorf("case-only rename reported replaced: %v", res)
	}
	if got := e.mustRead("root/case.txt"); got != "content" {
		t.Errorf("content after a case-only rename = %q", got)
	}
	e.ok("move", map[string]any{"src": "EmptyDir", "dst": "emptydir"})
	got := names()
	if !isDir(e, "root/emptydir") {
		t.Errorf("a case-only rename of an empty directory lost it: %v", got)
	}
	t.Logf("names after case-only renames: %v", got)
}

func TestMoveAcrossWorkdirsKeepsMode(t *testing.T) {
	if !unix() {
		t.Skip("permission bits are POSIX")
	}
	e := newEnv(t, testLimits, extraWorkdir{alias: "other", dir: "other"})
	e.write("root/run.sh", "#!/bin/sh\n")
	os.Chmod(filepath.Join(e.root, "run.sh"), 0o750)
	e.ok("move", map[string]any{"src": "run.sh", "dst": "run.sh", "dst_workdir": "other"})
	fi, err := os.Stat(filepath.Join(e.base, "other", "run.sh"))
	if err != nil || fi.Mode().Perm() != 0o750 {
		t.Fatalf("moved file: %v, mode %v; want 0750", err, fi.Mode())
	}
}

func TestFindFilesPatternMustBeRelative(t *testing.T) {
	e := newEnv(t, testLimits)
	for _, p := range []string{"/*", "/etc/*", `\*`, `C:\*`, "../*", "a/../../*", "**/../x"} {
		e.fail(errcode.InvalidArgument, "find_files", map[string]any{"pattern": p})
	}
}
