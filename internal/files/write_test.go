package files

import (
	"encoding/base64"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/errcode"
)

func TestWriteFileModes(t *testing.T) {
	cases := []struct {
		name        string
		mode        string // "" = default
		existing    *string
		wantCode    errcode.Code
		wantCreated bool
	}{
		{"create new", "create", nil, "", true},
		{"create existing", "create", ptr("old"), errcode.PathExists, false},
		{"overwrite existing", "overwrite", ptr("old"), "", false},
		{"overwrite missing", "overwrite", nil, errcode.PathNotFound, false},
		{"create_or_overwrite new", "create_or_overwrite", nil, "", true},
		{"create_or_overwrite existing", "create_or_overwrite", ptr("old"), "", false},
		{"default new", "", nil, "", true},
		{"default existing", "", ptr("old"), "", false},
		{"create existing empty", "create", ptr(""), errcode.PathExists, false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			e := newEnv(t, testLimits)
			if c.existing != nil {
				e.write("root/f.txt", *c.existing)
			}
			args := map[string]any{"path": "f.txt", "content": "new content"}
			if c.mode != "" {
				args["mode"] = c.mode
			}
			m, code := e.call("write_file", args)
			if code != c.wantCode {
				t.Fatalf("code %q, want %q", code, c.wantCode)
			}
			got, exists := e.read("root/f.txt")
			if c.wantCode != "" {
				// Refused: the disk is as it was.
				if c.existing == nil && exists {
					t.Errorf("a refused write created the file")
				}
				if c.existing != nil && got != *c.existing {
					t.Errorf("a refused write changed the file to %q", got)
				}
				e.noTemps()
				return
			}
			if got != "new content" {
				t.Errorf("file = %q", got)
			}
			if flag(m, "created") != c.wantCreated {
				t.Errorf("created = %v, want %v", m["created"], c.wantCreated)
			}
			if int(num(m, "bytes_written")) != len("new content") || str(m, "sha256") != sha([]byte("new content")) ||
				str(m, "revision") != "sha256:"+sha([]byte("new content")) || str(m, "path") != "f.txt" || str(m, "workdir") != "main" {
				t.Errorf("result = %v", m)
			}
			// The revision returned is the one read_file then reports.
			r := e.ok("read_file", map[string]any{"path": "f.txt"})
			if str(r, "revision") != str(m, "revision") {
				t.Errorf("read_file revision %q != write_file revision %q", str(r, "revision"), str(m, "revision"))
			}
			e.noTemps()
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestWriteFileExactBytes(t *testing.T) {
	e := newEnv(t, testLimits)
	cases := []struct {
		name, content, encoding string
		want                    []byte
	}{
		{"crlf", "a\r\nb\r\n", "", []byte("a\r\nb\r\n")},
		{"no trailing newline", "no newline", "", []byte("no newline")},
		{"lone cr", "a\rb", "utf-8", []byte("a\rb")},
		{"empty", "", "", []byte{}},
		{"unicode", "héllo wörld ✓", "", []byte("héllo wörld ✓")},
		{"base64 binary with NUL", base64.StdEncoding.EncodeToString([]byte{0, 1, 2, 0xff, 0, '\n', 0x80}), "base64",
			[]byte{0, 1, 2, 0xff, 0, '\n', 0x80}},
		{"base64 empty", "", "base64", []byte{}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			name := "f" + string(rune('a'+i)) + ".bin"
			args := map[string]any{"path": name, "content": c.content}
			if c.encoding != "" {
				args["encoding"] = c.encoding
			}
			m := e.ok("write_file", args)
			got, err := os.ReadFile(filepath.Join(e.root, name))
			if err != nil || string(got) != string(c.want) {
				t.Errorf("on disk %q (%v), want %q", got, err, c.want)
			}
			if int(num(m, "bytes_written")) != len(c.want) || str(m, "sha256") != sha(c.want) {
				t.Errorf("bytes_written/sha256 = %v/%v", m["bytes_written"], m["sha256"])
			}
			// read_file base64 returns the same bytes.
			r := e.ok("read_file", map[string]any{"path": name, "encoding": "base64"})
			if b, _ := base64.StdEncoding.DecodeString(str(r, "content")); string(b) != string(c.want) {
				t.Errorf("read back %q", b)
			}
		})
	}
	e.fail(errcode.InvalidArgument, "write_file", map[string]any{"path": "bad.bin", "content": "not base64!", "encoding": "base64"})
	e.fail(errcode.InvalidArgument, "write_file", map[string]any{"path": "bad.bin", "content": "x", "encoding": "utf-16"})
	e.fail(errcode.InvalidArgument, "write_file", map[string]any{"path": "bad.bin", "content": "x", "mode": "append"})
	if e.exists("root/bad.bin") {
		t.Error("a refused write created bad.bin")
	}
	e.noTemps()
}

func TestWriteFileParents(t *testing.T) {
	e := newEnv(t, testLimits)
	e.write("root/file.txt", "i am a file")

	e.fail(errcode.PathNotFound, "write_file", map[string]any{"path": "a/b/c.txt", "content": "x"})
	e.fail(errcode.PathNotFound, "write_file", map[string]any{"path": "a/b/c.txt", "content": "x", "create_parents": false})
	if e.exists("root/a") {
		t.Error("create_parents=false created a parent")
	}
	m := e.ok("write_file", map[string]any{"path": "a/b/c.txt", "content": "deep", "create_parents": true})
	if e.mustRead("root/a/b/c.txt") != "deep" || !flag(m, "created") || str(m, "path") != "a/b/c.txt" {
		t.Errorf("create_parents: %v", m)
	}
	if fi, err := os.Stat(filepath.Join(e.root, "a", "b")); err != nil || !fi.IsDir() {
		t.Errorf("parent not a directory: %v", err)
	}
	// A file where a parent directory should be.
	for _, p := range []string{"file.txt/x.txt", "file.txt/sub/x.txt"} {
		for _, cp := range []bool{false, true} {
			_, code := e.call("write_file", map[string]any{"path": p, "content": "x", "create_parents": cp})
			ok := code == errcode.NotADirectory
			if !unix() && p == "file.txt/sub/x.txt" && code == errcode.PathNotFound {
				// Windows reports a path running through a file as not
				// found (ERROR_PATH_NOT_FOUND), not ENOTDIR.
				t.Logf("write %s create_parents=%v: %s on Windows", p, cp, code)
				ok = true
			}
			if !ok {
				t.Errorf("write %s create_parents=%v: code %q, want NOT_A_DIRECTORY", p, cp, code)
			}
		}
	}
	if e.mustRead("root/file.txt") != "i am a file" {
		t.Error("file.txt changed")
	}
	e.noTemps()
}

func TestWriteFileIfRevision(t *testing.T) {
	e := newEnv(t, testLimits)
	e.write("root/f.txt", "v1")
	rev := str(e.ok("read_file", map[string]any{"path": "f.txt"}), "revision")

	m := e.ok("write_file", map[string]any{"path": "f.txt", "content": "v2", "if_revision": rev})
	rev2 := str(m, "revision")
	if e.mustRead("root/f.txt") != "v2" || rev2 == rev {
		t.Fatalf("matching if_revision: file %q, rev %q → %q", e.mustRead("root/f.txt"), rev, rev2)
	}
	// The old revision is now stale.
	e.fail(errcode.Conflict, "write_file", map[string]any{"path": "f.txt", "content": "v3", "if_revision": rev})
	if e.mustRead("root/f.txt") != "v2" {
		t.Error("a stale if_revision changed the file")
	}
	// A made-up revision, and one given for a file that does not exist.
	e.fail(errcode.Conflict, "write_file", map[string]any{"path": "f.txt", "content": "v3", "if_revision": "sha256:00"})
	e.fail(errcode.Conflict, "write_file", map[string]any{"path": "new.txt", "content": "x", "if_revision": rev2})
	if e.exists("root/new.txt") {
		t.Error("if_revision on a missing file created it")
	}
	// The current revision works with overwrite too.
	e.ok("write_file", map[string]any{"path": "f.txt", "content": "v3", "mode": "overwrite", "if_revision": rev2})
	if e.mustRead("root/f.txt") != "v3" {
		t.Error("overwrite with the current revision did not write")
	}
	// An external change makes the revision stale.
	rev3 := str(e.ok("stat", map[string]any{"path": "f.txt"}), "revision")
	e.write("root/f.txt", "changed behind our back")
	e.fail(errcode.Conflict, "write_file", map[string]any{"path": "f.txt", "content": "v4", "if_revision": rev3})
	if e.mustRead("root/f.txt") != "changed behind our back" {
		t.Error("stale revision after an external change still wrote")
	}
	e.noTemps()
}

func TestWriteFileIfRevisionLargeFile(t *testing.T) {
	e := newEnv(t, Limits{MaxReadBytes: 8, MaxWriteBytes: 64, MaxListEntries: 10, MaxSearchMatches: 10,
		MaxSearchBytes: 100, MaxSearchFileBytes: 100})
	e.write("root/big.txt", strings.Repeat("x", 20))
	rev := str(e.ok("read_file", map[string]any{"path": "big.txt", "length": 4}), "revision")
	if !strings.HasPrefix(rev, "meta:") {
		t.Fatalf("revision %q", rev)
	}
	if st := str(e.ok("stat", map[string]any{"path": "big.txt"}), "revision"); st != rev {
		t.Errorf("stat revision %q != read_file revision %q", st, rev)
	}
	m := e.ok("write_file", map[string]any{"path": "big.txt", "content": strings.Repeat("y", 20), "if_revision": rev})
	if str(m, "revision") == rev || !strings.HasPrefix(str(m, "revision"), "meta:") {
		t.Errorf("revision after write %q (was %q)", str(m, "revision"), rev)
	}
	if now := str(e.ok("stat", map[string]any{"path": "big.txt"}), "revision"); now != str(m, "revision") {
		t.Errorf("write_file revision %q != stat revision %q", str(m, "revision"), now)
	}
	e.fail(errcode.Conflict, "write_file", map[string]any{"path": "big.txt", "content": "z", "if_revision": rev})
	if e.mustRead("root/big.txt") != strings.Repeat("y", 20) {
		t.Error("stale meta revision still wrote")
	}
}

func TestWriteFileLimit(t *testing.T) {
	e := newEnv(t, smallLimits) // MaxWriteBytes 16
	at := strings.Repeat("a", 16)
	past := strings.Repeat("b", 17)
	b64 := base64.StdEncoding.EncodeToString
	cases := []struct {
		name, path, content, enc string
		want                     errcode.Code
		wantDisk                 string
	}{
		{"utf-8 at the limit", "u-at.txt", at, "", "", at},
		{"utf-8 past the limit", "u-past.txt", past, "", errcode.FileTooLarge, ""},
		{"utf-8 multi-byte at the limit", "u-mb.txt", strings.Repeat("é", 8), "", "", strings.Repeat("é", 8)},
		{"utf-8 multi-byte past the limit", "u-mbp.txt", strings.Repeat("é", 8) + "x", "", errcode.FileTooLarge, ""},
		{"base64 at the limit", "b-at.bin", b64([]byte(at)), "base64", "", at},
		{"base64 past the limit", "b-past.bin", b64([]byte(past)), "base64", errcode.FileTooLarge, ""},
		{"base64 far past the limit", "b-far.bin", b64([]byte(strings.Repeat("c", 1000))), "base64", errcode.FileTooLarge, ""},
		{"base64 15 bytes", "b-15.bin", b64([]byte(at[:15])), "base64", "", at[:15]},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := map[string]any{"path": c.path, "content": c.content}
			if c.enc != "" {
				args["encoding"] = c.enc
			}
			_, code := e.call("write_file", args)
			if code != c.want {
				t.Fatalf("code %q, want %q", code, c.want)
			}
			got, exists := e.read("root/" + c.path)
			if c.want != "" && exists {
				t.Errorf("a refused write created %s", c.path)
			}
			if c.want == "" && got != c.wantDisk {
				t.Errorf("on disk %q, want %q", got, c.wantDisk)
			}
		})
	}
	// Overwriting an existing file past the limit leaves it alone.
	e.write("root/keep.txt", "keep")
	e.fail(errcode.FileTooLarge, "write_file", map[string]any{"path": "keep.txt", "content": past})
	if e.mustRead("root/keep.txt") != "keep" {
		t.Error("a refused overwrite changed keep.txt")
	}
	e.noTemps()
}

func TestWriteFileKinds(t *testing.T) {
	e := newEnv(t, testLimits, extraWorkdir{alias: "ro", dir: "ro", readOnly: true})
	os.MkdirAll(filepath.Join(e.root, "dir", "inner"), 0o755)
	e.write("ro/existing.txt", "read-only content")
	cases := []struct {
		name string
		args map[string]any
		want errcode.Code
	}{
		{"a directory", map[string]any{"path": "dir", "content": "x"}, errcode.NotAFile},
		{"a directory, overwrite", map[string]any{"path": "dir", "content": "x", "mode": "overwrite"}, errcode.NotAFile},
		{"a directory, create", map[string]any{"path": "dir", "content": "x", "mode": "create"}, errcode.NotAFile},
		{"the workdir root", map[string]any{"path": ".", "content": "x"}, errcode.NotAFile},
		{"read-only new", map[string]any{"workdir": "ro", "path": "new.txt", "content": "x"}, errcode.ReadOnly},
		{"read-only existing", map[string]any{"workdir": "ro", "path": "existing.txt", "content": "x"}, errcode.ReadOnly},
		{"read-only by absolute path", map[string]any{"path": filepath.Join(e.base, "ro", "existing.txt"), "content": "x"}, errcode.ReadOnly},
		{"unknown workdir", map[string]any{"workdir": "nope", "path": "x.txt", "content": "x"}, errcode.UnknownWorkdir},
		{"missing content", map[string]any{"path": "x.txt"}, errcode.InvalidArgument},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { e.fail(c.want, "write_file", c.args) })
	}
	if fi, err := os.Stat(filepath.Join(e.root, "dir")); err != nil || !fi.IsDir() {
		t.Error("dir was replaced")
	}
	if e.mustRead("ro/existing.txt") != "read-only content" || e.exists("ro/new.txt") {
		t.Error("the read-only workdir changed")
	}
	e.noTemps()
}

func TestWriteFilePermissions(t *testing.T) {
	if !unix() {
		t.Skip("permission bits are POSIX")
	}
	e := newEnv(t, testLimits)
	e.write("root/secret.txt", "old")
	p := filepath.Join(e.root, "secret.txt")
	if err := os.Chmod(p, 0o600); err != nil {
		t.Fatal(err)
	}
	e.ok("write_file", map[string]any{"path": "secret.txt", "content": "new"})
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o600 {
		t.Errorf("mode after overwrite = %v (%v), want 0600", fi.Mode().Perm(), err)
	}
	os.Chmod(p, 0o755)
	e.ok("edit_file", map[string]any{"path": "secret.txt", "edits": []any{map[string]any{"old_text": "new", "new_text": "edited"}}})
	if fi, err := os.Stat(p); err != nil || fi.Mode().Perm() != 0o755 {
		t.Errorf("mode after edit = %v (%v), want 0755", fi.Mode().Perm(), err)
	}
	e.ok("write_file", map[string]any{"path": "fresh.txt", "content": "x"})
	if fi, err := os.Stat(filepath.Join(e.root, "fresh.txt")); err != nil || fi.Mode().Perm() != 0o644 {
		t.Errorf("mode of a new file = %v (%v), want 0644", fi.Mode().Perm(), err)
	}
	e.noTemps()
}

func TestWriteFileThroughSymlink(t *testing.T) {
	e := newEnv(t, testLimits)
	e.write("root/target.txt", "target")
	os.MkdirAll(filepath.Join(e.root, "sub"), 0o755)
	os.MkdirAll(filepath.Join(e.root, "realdir"), 0o755)
	e.symlink("target.txt", "root/link.txt")
	e.symlink("../target.txt", "root/sub/uplink.txt")
	e.symlink("missing.txt", "root/dangling.txt")
	e.symlink("realdir", "root/dirlink")

	check := func(link, wantTarget string) {
		t.Helper()
		fi, err := os.Lstat(filepath.Join(e.root, filepath.FromSlash(link)))
		if err != nil || fi.Mode()&os.ModeSymlink == 0 {
			t.Errorf("%s is no longer a symlink (%v)", link, err)
			return
		}
		if tg, _ := os.Readlink(filepath.Join(e.root, filepath.FromSlash(link))); tg != filepath.FromSlash(wantTarget) {
			t.Errorf("%s now points to %q", link, tg)
		}
	}
	m := e.ok("write_file", map[string]any{"path": "link.txt", "content": "via link"})
	if e.mustRead("root/target.txt") != "via link" || flag(m, "created") {
		t.Errorf("target = %q, created = %v", e.mustRead("root/target.txt"), m["created"])
	}
	check("link.txt", "target.txt")

	e.ok("write_file", map[string]any{"path": "sub/uplink.txt", "content": "via uplink", "mode": "overwrite"})
	if e.mustRead("root/target.txt") != "via uplink" {
		t.Error("write through a relative ../ link did not reach the target")
	}
	check("sub/uplink.txt", "../target.txt")

	// A dangling link inside: the write creates its target.
	e.ok("write_file", map[string]any{"path": "dangling.txt", "content": "now exists"})
	if e.mustRead("root/missing.txt") != "now exists" {
		t.Error("write through a dangling link did not create its target")
	}
	check("dangling.txt", "missing.txt")

	// A file below a symlinked directory.
	e.ok("write_file", map[string]any{"path": "dirlink/f.txt", "content": "in realdir"})
	if e.mustRead("root/realdir/f.txt") != "in realdir" {
		t.Error("write below a symlinked directory missed")
	}
	// A link to a directory is not a file.
	e.fail(errcode.NotAFile, "write_file", map[string]any{"path": "dirlink", "content": "x"})
	check("dirlink", "realdir")
	e.noTemps()
}

// TestWriteFileCreateRace races mode create against another process making
// the same name with O_EXCL: exactly one of them wins, the file holds the
// winner's bytes, and a losing write leaves no temporary file behind (the
// loss is often found only when publishing, after the temporary file exists).
func TestWriteFileCreateRace(t *testing.T) {
	e := newEnv(t, testLimits)
	p := filepath.Join(e.root, "race.txt")
	var lost, won int
	for i := range 60 {
		os.Remove(p)
		done := make(chan bool)
		go func() {
			time.Sleep(time.Duration(i%6) * 200 * time.Microsecond)
			f, err := os.OpenFile(p, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o644)
			if err == nil {
				f.WriteString("external")
				f.Close()
			}
			done <- err == nil
		}()
		_, code := e.call("write_file", map[string]any{"path": "race.txt", "content": "hostlink", "mode": "create"})
		external := <-done
		got := e.mustRead("root/race.txt")
		switch {
		case code == "" && !external && got == "hostlink":
			won++
		case code == errcode.PathExists && external && got == "external":
			lost++
		default:
			t.Fatalf("round %d: hostlink %q, external created %v, file %q", i, code, external, got)
		}
	}
	t.Logf("hostlink won %d, lost %d", won, lost)
	e.noTemps()
}

// TestMetaRevisionInPlaceChange: a file over the read limit has a metadata
// revision; rewriting it in place with the same size and then restoring its
// mtime must still change the revision (POSIX: the change time moves).
func TestMetaRevisionInPlaceChange(t *testing.T) {
	e := newEnv(t, smallLimits) // MaxReadBytes 16
	p := filepath.Join(e.root, "big.txt")
	e.write("root/big.txt", strings.Repeat("a", 40))
	mt := time.Date(2022, 5, 6, 7, 8, 9, 0, time.UTC)
	os.Chtimes(p, mt, mt)
	rev := str(e.ok("stat", map[string]any{"path": "big.txt"}), "revision")
	if !strings.HasPrefix(rev, "meta:") {
		t.Fatalf("revision %q", rev)
	}
	time.Sleep(20 * time.Millisecond)
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteAt([]byte("b"), 0)
	f.Close()
	os.Chtimes(p, mt, mt)
	now := str(e.ok("stat", map[string]any{"path": "big.txt"}), "revision")
	if now == rev {
		t.Errorf("revision %q unchanged after an in-place change", now)
	}
	e.fail(errcode.Conflict, "write_file", map[string]any{"path": "big.txt", "content": "x", "if_revision": rev})
}
