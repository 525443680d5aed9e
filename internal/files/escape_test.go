package files

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/errcode"
)

// attempt is one path that must not reach outside the workdir.
type attempt struct {
	path string
	code errcode.Code
}

// escapeFixture lays out, beside the workdir "root": "outside" (with a
// secret and a directory), "root2" (a sibling whose name extends root's),
// and inside the root a set of symlinks that lead out, directly, absolutely,
// through chains and through symlinked parent directories.
func escapeFixture(t *testing.T, e *env) (symlinks bool) {
	e.write("outside/secret.txt", "SECRET")
	e.write("outside/dir/deep.txt", "SECRET")
	e.write("root2/x", "SECRET")
	e.write("root/victim.txt", "victim")
	e.write("root/sub/in.txt", "inside")
	os.MkdirAll(filepath.Join(e.root, "sub", "deep", "er"), 0o755)
	links := []struct{ name, target string }{
		{"link-out", "../outside"},
		{"link-out-abs", filepath.Join(e.base, "outside")},
		{"link-secret", "../outside/secret.txt"},
		{"link-secret-abs", filepath.Join(e.base, "outside", "secret.txt")},
		{"chain1", "chain2"},
		{"chain2", "chain3"},
		{"chain3", "../outside"},
		{"chain-abs", filepath.Join(e.root, "chain3")},
		{"sub/up", ".."},
		{"sub/up2", "../.."},
		{"sub/deep/er/up3", "../../../.."},
		{"link-root2", "../root2"},
		{"link-root2-abs", filepath.Join(e.base, "root2")},
		{"link-base", e.base},
		{"link-slash", string(filepath.Separator)},
		{"dangling-out", "../outside/nothing"},
		{"dangling-out-abs", filepath.Join(e.base, "nothing")},
		{"via-sub", "sub/up2"},
	}
	for _, l := range links {
		if err := os.Symlink(filepath.FromSlash(l.target), filepath.Join(e.root, filepath.FromSlash(l.name))); err != nil {
			if runtime.GOOS == "windows" {
				t.Logf("symlinks unavailable, symlink attempts skipped: %v", err)
				return false
			}
			t.Fatal(err)
		}
	}
	return true
}

// escapeAttempts is the table: lexical climbs in every position, absolute
// paths elsewhere, siblings, symlinks and chains out, symlinked parents,
// case tricks, NULs, and on Windows every Windows-only form.
func escapeAttempts(e *env, symlinks, fold bool) []attempt {
	var as []attempt
	add := func(code errcode.Code, paths ...string) {
		for _, p := range paths {
			as = append(as, attempt{p, code})
		}
	}
	out := errcode.PathOutsideRoot
	tails := []string{"", "outside", "outside/secret.txt", "outside/new.txt", "outside/dir", "outside/dir/deep.txt",
		"outside/dir/new/x.txt", "root2", "root2/x", "root"}
	prefixes := []string{"../", "../../", "../../../", "./../", "sub/../../", "sub/./../../", "sub/deep/../../../",
		"sub/deep/er/../../../../", "a/b/c/../../../../", "sub/..//../"}
	for _, p := range prefixes {
		for _, tl := range tails {
			if p == "../" && tl == "root" {
				continue // ../root is the root itself
			}
			add(out, p+tl)
		}
	}
	add(out, "..", "sub/../..", "sub/deep/../../..", "../root/../outside/secret.txt", "sub/../../root/../outside")
	sep := string(filepath.Separator)
	add(out,
		filepath.Join(e.base, "outside", "secret.txt"),
		filepath.Join(e.base, "outside", "new.txt"),
		filepath.Join(e.base, "outside"),
		filepath.Join(e.base, "root2", "x"),
		filepath.Join(e.base, "root2"),
		e.root+"2"+sep+"x",
		e.root+"2",
		e.root+sep+".."+sep+"outside"+sep+"secret.txt",
		e.root+sep+"sub"+sep+".."+sep+".."+sep+"root2",
		e.base,
		filepath.Dir(e.base),
		os.TempDir(),
	)
	if runtime.GOOS == "windows" {
		add(out, `C:\Windows\win.ini`, `C:\`, `\Windows\System32`)
	} else {
		add(out, "/etc/passwd", "/etc", "/", "/root", "/proc/self/environ", "/dev/null")
	}
	// Case tricks: on a case-sensitive root, another case is another path;
	// on a case-insensitive one, it is the same root, and climbing out of it
	// or into a sibling is still refused.
	if fold {
		add(out,
			swapAll(e.root)+sep+".."+sep+"outside"+sep+"secret.txt",
			swapAll(e.root)+"2"+sep+"x",
			strings.ToUpper(filepath.Join(e.base, "outside", "secret.txt")),
			"../OUTSIDE/SECRET.TXT",
			"SUB/../../Outside/secret.txt")
	} else {
		add(out,
			filepath.Join(filepath.Dir(e.root), "ROOT", "victim.txt"),
			filepath.Join(filepath.Dir(e.root), "Root", "sub"),
			strings.ToUpper(e.root)+sep+"victim.txt")
	}
	if symlinks {
		add(out,
			"link-out", "link-out/secret.txt", "link-out/new.txt", "link-out/dir", "link-out/dir/deep.txt", "link-out/dir/new/x",
			"link-out-abs", "link-out-abs/secret.txt", "link-out-abs/new.txt",
			"link-secret", "link-secret-abs",
			"chain1", "chain1/secret.txt", "chain1/new.txt", "chain2/dir", "chain-abs", "chain-abs/secret.txt",
			"sub/up2", "sub/up2/outside/secret.txt", "sub/up2/outside/new.txt", "sub/up/link-out/secret.txt",
			"sub/deep/er/up3", "sub/deep/er/up3/outside/secret.txt",
			"link-root2", "link-root2/x", "link-root2/new", "link-root2-abs/x",
			"link-base", "link-base/outside/secret.txt", "link-slash", "link-slash/etc",
			"dangling-out", "dangling-out-abs", "via-sub", "via-sub/outside/secret.txt", "via-sub/root2/new")
	}
	inv := errcode.PathInvalidChars
	add(inv, "victim.txt\x00", "\x00", "sub/\x00/../../outside", "sub\x00/../../../etc/passwd", "a\nb", "bad\x7fname")
	if runtime.GOOS == "windows" {
		add(errcode.PathReservedName, "CON", "con", "con.txt", "sub/NUL", "PRN.log", "AUX", "COM1", "com9.txt", "LPT1",
			"lpt9.x.y", "COM¹", "LPT³.txt", "NUL ", "nul.", "CONIN$", "CONOUT$", `sub\AuX.tar.gz`)
		add(inv, "victim.txt:hidden", "victim.txt::$DATA", `sub\in.txt:ads:$DATA`, "a<b", "a>b", `a"b`, "a|b", "a?b",
			"a*b", "trailing.", "trailing ", `sub.\in.txt`, "...", ".. ", "a\tb")
		add(out, `\\?\`+e.base+`\outside\secret.txt`, `\\?\`+e.root+`\..\outside\secret.txt`,
			`\\.\`+e.root+`\victim.txt`, `\\.\CON`, `\\.\PhysicalDrive0`, `\??\`+e.root+`\victim.txt`,
			`\\localhost\C$\Windows`, `\\?\UNC\localhost\C$\Windows`, `\\127.0.0.1\share\x`,
			`C:secret.txt`, `Z:\x`, `sub/..\..\outside\secret.txt`, `sub\../..\root2/x`)
	}
	return as
}

func swapAll(s string) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case 'a' <= r && r <= 'z':
			r -= 'a' - 'A'
		case 'A' <= r && r <= 'Z':
			r += 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// snapshot hashes every name and file under dir, without following links.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var lines []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			lines = append(lines, p+" error")
			return nil
		}
		line := p + " " + d.Type().String()
		if d.Type().IsRegular() {
			b, _ := os.ReadFile(p)
			sum := sha256.Sum256(b)
			line += " " + hex.EncodeToString(sum[:])
		}
		lines = append(lines, line)
		return nil
	})
	sort.Strings(lines)
	return strings.Join(lines, "\n")
}

// TestEscapeTable tries every escape attempt against every operation that
// takes a path, both ends of move included. Each must be refused with the
// right code and leave nothing changed outside the root.
func TestEscapeTable(t *testing.T) {
	e := newEnv(t, testLimits)
	symlinks := escapeFixture(t, e)
	fold := e.svc.workdirs[0].Root.CaseInsensitive()
	attempts := escapeAttempts(e, symlinks, fold)
	if len(attempts) < 150 {
		t.Fatalf("only %d escape attempts; the table must hold at least 150", len(attempts))
	}
	t.Logf("%d escape attempts × %d operations", len(attempts), len(pathOps))
	outside := []string{filepath.Join(e.base, "outside"), filepath.Join(e.base, "root2")}
	before := make([]string, len(outside))
	for i, d := range outside {
		before[i] = snapshot(t, d)
	}
	for _, a := range attempts {
		for _, op := range pathOps {
			name, args := op(a.path)
			_, code := e.call(name, args)
			if code != a.code {
				t.Errorf("%s %q: code %q, want %q", name, a.path, code, a.code)
			}
		}
	}
	for i, d := range outside {
		if after := snapshot(t, d); after != before[i] {
			t.Errorf("%s changed:\nbefore:\n%s\nafter:\n%s", d, before[i], after)
		}
	}
	if got, _ := e.read("root/victim.txt"); got != "victim" {
		t.Errorf("victim.txt = %q; a refused move or write touched it", got)
	}
	if _, exists := e.read("root/moved"); exists {
		t.Error("a refused move created root/moved")
	}
	if rep, err := audit.Verify(filepath.Join(e.base, "audit"), "", e.key); err != nil || rep.Failure != nil {
		t.Errorf("audit log does not verify: %v %v", err, rep.Failure)
	} else if want := len(attempts) * len(pathOps); rep.Records < want {
		t.Errorf("audit log has %d records for %d calls", rep.Records, want)
	}
}

// pathOps are the operations that take a path, each building its request
// around one attempted path.
var pathOps = []func(p string) (string, map[string]any){
	func(p string) (string, map[string]any) { return "read_file", map[string]any{"path": p} },
	func(p string) (string, map[string]any) {
		return "read_file", map[string]any{"path": p, "offset": 1, "length": 2, "encoding": "base64"}
	},
	func(p string) (string, map[string]any) {
		return "write_file", map[string]any{"path": p, "content": "x", "create_parents": true}
	},
	func(p string) (string, map[string]any) {
		return "write_file", map[string]any{"path": p, "content": "eA==", "encoding": "base64", "mode": "create"}
	},
	func(p string) (string, map[string]any) {
		return "write_file", map[string]any{"path": p, "content": "x", "mode": "overwrite"}
	},
	func(p string) (string, map[string]any) {
		return "edit_file", map[string]any{"path": p, "edits": []any{map[string]any{"old_text": "SECRET", "new_text": "x"}}}
	},
	func(p string) (string, map[string]any) { return "stat", map[string]any{"path": p} },
	func(p string) (string, map[string]any) {
		return "stat", map[string]any{"path": p, "follow_symlinks": false}
	},
	func(p string) (string, map[string]any) { return "list_directory", map[string]any{"path": p} },
	func(p string) (string, map[string]any) {
		return "list_directory", map[string]any{"path": p, "recursive": true, "include_hidden": true}
	},
	func(p string) (string, map[string]any) { return "create_directory", map[string]any{"path": p} },
	func(p string) (string, map[string]any) {
		return "delete", map[string]any{"path": p, "recursive": true}
	},
	func(p string) (string, map[string]any) {
		return "delete", map[string]any{"path": p, "missing_ok": true}
	},
	func(p string) (string, map[string]any) { return "move", map[string]any{"src": p, "dst": "moved"} },
	func(p string) (string, map[string]any) {
		return "move", map[string]any{"src": "victim.txt", "dst": p, "overwrite": true}
	},
	func(p string) (string, map[string]any) {
		return "find_files", map[string]any{"path": p, "pattern": "**"}
	},
	func(p string) (string, map[string]any) {
		return "search_text", map[string]any{"path": p, "query": "SECRET"}
	},
}
