package files

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/jail"
)

// TestProtectedHomeInWorkdir is finding 1 of issue #16 through the
// operations: in a workdir holding hostlink's home, links whose targets
// put ".." after another link (t -> s/../state/http.token, u ->
// s/../config) read the token and replaced the configuration. Every
// operation refuses them, walks and searches never see the protected
// directories, and the policy's Canonical refuses them too.
func TestProtectedHomeInWorkdir(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need a privilege on Windows")
	}
	var cfg, state string
	e := newEnvSetup(t, testLimits, func(e *env) jail.Options {
		root := e.root
		cfg, state = filepath.Join(root, "home", "config"), filepath.Join(root, "home", "state")
		os.MkdirAll(cfg, 0o700)
		os.MkdirAll(state, 0o700)
		os.WriteFile(filepath.Join(cfg, "config.toml"), []byte("[commands]\nenabled = false\n"), 0o600)
		os.WriteFile(filepath.Join(state, "http.token"), []byte("TOKEN-5e1f"), 0o600)
		os.WriteFile(filepath.Join(root, "p.toml"), []byte("[commands]\nenabled = true\n"), 0o644)
		for name, target := range map[string]string{"s": "home/state", "t": "s/../state/http.token", "u": "s/../config", "v": "s/..", "q": "home/../p.toml"} {
			if err := os.Symlink(target, filepath.Join(root, name)); err != nil {
				t.Fatal(err)
			}
		}
		os.MkdirAll(filepath.Join(e.base, "w2"), 0o755)
		os.WriteFile(filepath.Join(e.base, "w2", "p.toml"), []byte("[commands]\nenabled = true\n"), 0o644)
		return jail.Options{Protected: []string{cfg, state}}
	}, extraWorkdir{alias: "second", dir: "w2"})
	outside := errcode.PathOutsideRoot
	for _, c := range []struct {
		op   string
		args map[string]any
	}{
		{"read_file", map[string]any{"path": "t"}},
		{"read_file", map[string]any{"path": "u/config.toml"}},
		{"read_file", map[string]any{"path": "v/state/http.token"}},
		{"stat", map[string]any{"path": "t"}},
		{"stat", map[string]any{"path": "u/config.toml", "follow_symlinks": false}},
		{"move", map[string]any{"src": "p.toml", "dst": "u/config.toml", "overwrite": true}},
		{"move", map[string]any{"src": "t", "dst": "stolen"}},
		{"move", map[string]any{"src": "home", "dst": "moved"}},
		{"move", map[string]any{"src": "t", "dst": "token", "dst_workdir": "second"}},
		{"move", map[string]any{"workdir": "second", "src": "p.toml", "dst": "u/config.toml", "dst_workdir": "main", "overwrite": true}},
		{"write_file", map[string]any{"path": "u/config.toml", "content": "[commands]\nenabled = true\n"}},
		{"edit_file", map[string]any{"path": "u/config.toml", "edits": edits("false", "true"), "dry_run": true}},
		{"create_directory", map[string]any{"path": "u/x"}},
		{"create_directory", map[string]any{"path": "v/state/x"}},
		{"delete", map[string]any{"path": "u/config.toml"}},
		{"delete", map[string]any{"path": "v/state", "recursive": true}},
		{"delete", map[string]any{"path": "home", "recursive": true}},
		{"list_directory", map[string]any{"path": "u"}},
		{"find_files", map[string]any{"path": "v/config", "pattern": "*"}},
		{"search_text", map[string]any{"path": "t", "query": "TOKEN"}},
	} {
		if _, code := e.call(c.op, c.args); code != outside {
			t.Errorf("%s %v: %q, want %s", c.op, c.args, code, outside)
		}
	}
	res := e.ok("search_text", map[string]any{"query": "TOKEN-5e1f", "include_hidden": true})
	if m := list(res, "matches"); len(m) != 0 {
		t.Errorf("search_text found the token: %v", m)
	}
	listed := e.ok("list_directory", map[string]any{"recursive": true, "include_hidden": true})
	for _, en := range list(listed, "entries") {
		if p := str(en, "path"); strings.HasPrefix(p, "home/state") || strings.HasPrefix(p, "home/config") {
			t.Errorf("list_directory shows %s", p)
		}
	}
	for _, p := range []string{"t", "u/config.toml", "v/state"} {
		if loc, err := e.svc.Locate("", p); err != nil || loc.Real != "" {
			t.Errorf("Locate(%s) = %+v %v, want no real path", p, loc, err)
		}
	}
	if loc, err := e.svc.Locate("", "q"); err != nil || loc.Workdir != "main" || loc.Real != "p.toml" {
		t.Errorf("Locate(q) = %+v %v, want main p.toml", loc, err)
	}
	if b, _ := os.ReadFile(filepath.Join(cfg, "config.toml")); string(b) != "[commands]\nenabled = false\n" {
		t.Errorf("config.toml is now %q", b)
	}
	if ents, _ := os.ReadDir(state); len(ents) != 1 {
		t.Errorf("the state directory changed: %v", ents)
	}
}

// TestGuardedProgramInWorkdir is finding 5 of issue #37 through the
// operations: in a workdir holding hostlink's program and unit (a workdir
// of ~ after install.sh), write_file, move with overwrite and edit_file
// replaced the program and edited the unit. Every change to them, to a
// drop-in not created yet and to the directories that hold them is
// refused with READ_ONLY or PATH_OUTSIDE_ALLOWED_ROOT; reading them
// (and a dry run of an edit) still works.
func TestGuardedProgramInWorkdir(t *testing.T) {
	var program, unit string
	e := newEnvSetup(t, testLimits, func(e *env) jail.Options {
		program = filepath.Join(e.root, ".local", "bin", "hostlink")
		unit = filepath.Join(e.root, ".config", "systemd", "user", "hostlink.service")
		os.MkdirAll(filepath.Dir(program), 0o755)
		os.MkdirAll(filepath.Dir(unit), 0o755)
		os.WriteFile(program, []byte("PROGRAM"), 0o755)
		os.WriteFile(unit, []byte("[Service]\nExecStart=hostlink serve\n"), 0o644)
		os.WriteFile(filepath.Join(e.root, "evil"), []byte("EVIL"), 0o755)
		return jail.Options{Guarded: []string{program, unit, unit + ".d"}}
	}, extraWorkdir{alias: "second", dir: "w2"})
	e.write("w2/evil", "EVIL")
	for _, c := range []struct {
		op   string
		args map[string]any
	}{
		{"write_file", map[string]any{"path": ".local/bin/hostlink", "content": "EVIL"}},
		{"move", map[string]any{"src": "evil", "dst": ".local/bin/hostlink", "overwrite": true}},
		{"move", map[string]any{"workdir": "second", "src": "evil", "dst": ".local/bin/hostlink", "dst_workdir": "main", "overwrite": true}},
		{"move", map[string]any{"src": ".local/bin/hostlink", "dst": "hostlink.old"}},
		{"move", map[string]any{"src": ".local/bin", "dst": "bin.old"}},
		{"move", map[string]any{"src": ".local", "dst": "local.old"}},
		{"delete", map[string]any{"path": ".local/bin/hostlink"}},
		{"delete", map[string]any{"path": ".local", "recursive": true}},
		{"edit_file", map[string]any{"path": ".config/systemd/user/hostlink.service", "edits": edits("hostlink serve", "evil")}},
		{"write_file", map[string]any{"path": ".config/systemd/user/hostlink.service", "content": "[Service]\nExecStart=evil\n"}},
		{"create_directory", map[string]any{"path": ".config/systemd/user/hostlink.service.d"}},
		{"write_file", map[string]any{"path": ".config/systemd/user/hostlink.service.d/override.conf", "content": "[Service]\nExecStart=evil\n", "create_parents": true}},
	} {
		if _, code := e.call(c.op, c.args); code != errcode.ReadOnly && code != errcode.PathOutsideRoot {
			t.Errorf("%s %v: %q, want it refused", c.op, c.args, code)
		}
	}
	if got := e.ok("read_file", map[string]any{"path": ".config/systemd/user/hostlink.service"}); !strings.Contains(str(got, "content"), "hostlink serve") {
		t.Errorf("read_file of the unit: %v", got)
	}
	e.ok("edit_file", map[string]any{"path": ".config/systemd/user/hostlink.service", "edits": edits("hostlink serve", "evil"), "dry_run": true})
	e.ok("write_file", map[string]any{"path": ".local/bin/other", "content": "mine"})
	if b, _ := os.ReadFile(program); string(b) != "PROGRAM" {
		t.Errorf("the program is now %q", b)
	}
	if b, _ := os.ReadFile(unit); string(b) != "[Service]\nExecStart=hostlink serve\n" {
		t.Errorf("the unit is now %q", b)
	}
	if _, err := os.Lstat(unit + ".d"); err == nil {
		t.Error("a drop-in directory was created")
	}
}

// TestHardlinkOps is finding 11 of issue #16 through the operations: a hard
// link to a file outside the workdir was read, and search_text found its
// content. By default such files are refused for reading and editing and
// skipped by search; a workdir opts in with hardlinks = "allow".
func TestHardlinkOps(t *testing.T) {
	for _, allow := range []bool{false, true} {
		e := newEnvWith(t, testLimits, jail.Options{Hardlinks: allow}, extraWorkdir{alias: "second", dir: "w2"})
		e.write("outside/secret.txt", "SECRET-91c2")
		if err := os.Link(filepath.Join(e.base, "outside", "secret.txt"), filepath.Join(e.root, "hl.txt")); err != nil {
			t.Skipf("hard links unavailable: %v", err)
		}
		e.write("root/plain.txt", "plain")
		_, readCode := e.call("read_file", map[string]any{"path": "hl.txt"})
		_, editCode := e.call("edit_file", map[string]any{"path": "hl.txt", "edits": edits("SECRET", "x"), "dry_run": true})
		search := e.ok("search_text", map[string]any{"query": "SECRET-91c2"})
		found := len(list(search, "matches"))
		stat := e.ok("stat", map[string]any{"path": "hl.txt"})
		if allow {
			if readCode != "" || editCode != "" || found != 1 || stat["revision"] == nil {
				t.Errorf("hardlinks allowed: read %q, edit %q, %d matches, stat %v", readCode, editCode, found, stat)
			}
			continue
		}
		if readCode != jail.HardlinkRefused || editCode != jail.HardlinkRefused {
			t.Errorf("read_file %q, edit_file %q; want HARDLINK_REFUSED", readCode, editCode)
		}
		// A move to another workdir copies, so it reads: refused too.
		if _, code := e.call("move", map[string]any{"src": "hl.txt", "dst": "hl.txt", "dst_workdir": "second"}); code != jail.HardlinkRefused {
			t.Errorf("move across workdirs: %q, want HARDLINK_REFUSED", code)
		}
		if found != 0 || search["files_skipped"].(float64) < 1 {
			t.Errorf("search_text: %d matches, %v skipped; want the file skipped", found, search["files_skipped"])
		}
		if stat["exists"] != true || stat["size_bytes"].(float64) != 11 || stat["revision"] != nil {
			t.Errorf("stat of a hard link: %v (metadata without a revision)", stat)
		}
		// A write replaces the name; the other file keeps its content.
		e.ok("write_file", map[string]any{"path": "hl.txt", "content": "mine"})
		if got, _ := e.read("outside/secret.txt"); got != "SECRET-91c2" {
			t.Errorf("the outside file is now %q", got)
		}
		if got := e.ok("read_file", map[string]any{"path": "hl.txt"}); got["content"] != "mine" {
			t.Errorf("after the write: %v", got)
		}
	}
}
