package files

import (
	"encoding/base64"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/errcode"
)

func TestReadFileRanges(t *testing.T) {
	e := newEnv(t, testLimits)
	const text = "hello, world\n" // 13 bytes
	e.write("root/a.txt", text)
	e.write("root/empty.txt", "")
	n := func(v int) *int { return &v }
	cases := []struct {
		name    string
		path    string
		offset  int
		length  *int
		want    string
		wantEOF bool
	}{
		{"whole", "a.txt", 0, nil, text, true},
		{"prefix", "a.txt", 0, n(5), "hello", false},
		{"middle", "a.txt", 7, n(5), "world", false},
		{"suffix without length", "a.txt", 7, nil, "world\n", true},
		{"range reaching the end", "a.txt", 7, n(6), "world\n", true},
		{"length past the end", "a.txt", 7, n(100), "world\n", true},
		{"offset at the end", "a.txt", 13, nil, "", true},
		{"offset past the end", "a.txt", 100, nil, "", true},
		{"offset past the end with length", "a.txt", 100, n(5), "", true},
		{"length 0", "a.txt", 0, n(0), "", false},
		{"length 0 in the middle", "a.txt", 3, n(0), "", false},
		{"empty file", "empty.txt", 0, nil, "", true},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := map[string]any{"path": c.path, "offset": c.offset}
			if c.length != nil {
				args["length"] = *c.length
			}
			m := e.ok("read_file", args)
			if got := str(m, "content"); got != c.want {
				t.Errorf("content = %q, want %q", got, c.want)
			}
			if got := num(m, "length"); int(got) != len(c.want) {
				t.Errorf("length = %v, want %d", got, len(c.want))
			}
			if got := flag(m, "eof"); got != c.wantEOF {
				t.Errorf("eof = %v, want %v", got, c.wantEOF)
			}
			if got := num(m, "offset"); int(got) != c.offset {
				t.Errorf("offset = %v, want %d", got, c.offset)
			}
			full, _ := e.read("root/" + c.path)
			if got := num(m, "size_bytes"); int(got) != len(full) {
				t.Errorf("size_bytes = %v, want %d", got, len(full))
			}
			if got := str(m, "sha256"); got != sha([]byte(c.want)) {
				t.Errorf("sha256 = %s, want the SHA-256 of the returned bytes %s", got, sha([]byte(c.want)))
			}
			if got := str(m, "revision"); got != "sha256:"+sha([]byte(full)) {
				t.Errorf("revision = %s, want sha256 of the whole file", got)
			}
			if str(m, "encoding") != "utf-8" || str(m, "workdir") != "main" || str(m, "path") != c.path {
				t.Errorf("encoding/workdir/path = %q/%q/%q", str(m, "encoding"), str(m, "workdir"), str(m, "path"))
			}
		})
	}
}

func TestReadFileFields(t *testing.T) {
	e := newEnv(t, testLimits)
	content := "line one\r\nline two\r\nno newline at end"
	e.write("root/sub/crlf.txt", content)
	p := filepath.Join(e.root, "sub", "crlf.txt")
	mt := time.Date(2021, 3, 4, 5, 6, 7, 500_000_000, time.UTC)
	if err := os.Chtimes(p, mt, mt); err != nil {
		t.Fatal(err)
	}
	m := e.ok("read_file", map[string]any{"path": "sub/crlf.txt"})
	if got := str(m, "content"); got != content {
		t.Errorf("CRLF content changed: %q, want %q", got, content)
	}
	if got := num(m, "size_bytes"); int(got) != len(content) {
		t.Errorf("size_bytes = %v, want %d", got, len(content))
	}
	want := sha([]byte(content))
	if str(m, "sha256") != want {
		t.Errorf("sha256 = %s, want %s", str(m, "sha256"), want)
	}
	if str(m, "revision") != "sha256:"+want {
		t.Errorf("revision = %s, want sha256:%s", str(m, "revision"), want)
	}
	if got, want := num(m, "mtime"), float64(mt.UnixNano())/1e9; math.Abs(got-want) > 1e-3 {
		t.Errorf("mtime = %f, want %f", got, want)
	}
	if str(m, "path") != "sub/crlf.txt" {
		t.Errorf("path = %q", str(m, "path"))
	}
	// The revision read_file reports is the one stat reports.
	st := e.ok("stat", map[string]any{"path": "sub/crlf.txt"})
	if str(st, "revision") != str(m, "revision") {
		t.Errorf("stat revision %q != read_file revision %q", str(st, "revision"), str(m, "revision"))
	}
}

func TestReadFileEncodings(t *testing.T) {
	e := newEnv(t, testLimits)
	bin := []byte{0x00, 0xff, 0xfe, 0x80, 'a', 0x00, '\r', '\n', 0xc3}
	e.write("root/bin.dat", string(bin))
	e.write("root/utf.txt", "héllo") // é is 2 bytes at offset 1..2

	t.Run("base64 round-trips binary", func(t *testing.T) {
		m := e.ok("read_file", map[string]any{"path": "bin.dat", "encoding": "base64"})
		got, err := base64.StdEncoding.DecodeString(str(m, "content"))
		if err != nil || string(got) != string(bin) {
			t.Errorf("decoded %v (%v), want %v", got, err, bin)
		}
		if str(m, "encoding") != "base64" || int(num(m, "length")) != len(bin) || str(m, "sha256") != sha(bin) {
			t.Errorf("encoding/length/sha256 = %v/%v/%v", m["encoding"], m["length"], m["sha256"])
		}
	})
	t.Run("base64 range", func(t *testing.T) {
		m := e.ok("read_file", map[string]any{"path": "bin.dat", "encoding": "base64", "offset": 1, "length": 3})
		got, _ := base64.StdEncoding.DecodeString(str(m, "content"))
		if string(got) != string(bin[1:4]) {
			t.Errorf("decoded %v, want %v", got, bin[1:4])
		}
	})
	cases := []struct {
		name string
		args map[string]any
		want errcode.Code
	}{
		{"invalid UTF-8 as utf-8", map[string]any{"path": "bin.dat"}, errcode.InvalidArgument},
		{"invalid UTF-8 as explicit utf-8", map[string]any{"path": "bin.dat", "encoding": "utf-8"}, errcode.InvalidArgument},
		{"range splitting a rune", map[string]any{"path": "utf.txt", "offset": 2}, errcode.InvalidArgument},
		{"range ending inside a rune", map[string]any{"path": "utf.txt", "length": 2}, errcode.InvalidArgument},
		{"unknown encoding", map[string]any{"path": "utf.txt", "encoding": "latin1"}, errcode.InvalidArgument},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) { e.fail(c.want, "read_file", c.args) })
	}
	t.Run("valid range of a UTF-8 file", func(t *testing.T) {
		m := e.ok("read_file", map[string]any{"path": "utf.txt", "offset": 1, "length": 2})
		if str(m, "content") != "é" {
			t.Errorf("content = %q", str(m, "content"))
		}
	})
}

func TestReadFileErrors(t *testing.T) {
	e := newEnv(t, testLimits)
	e.write("root/a.txt", "abc")
	os.MkdirAll(filepath.Join(e.root, "dir"), 0o755)
	cases := []struct {
		name string
		args map[string]any
		want errcode.Code
	}{
		{"negative offset", map[string]any{"path": "a.txt", "offset": -1}, errcode.InvalidArgument},
		{"negative length", map[string]any{"path": "a.txt", "length": -1}, errcode.InvalidArgument},
		{"directory", map[string]any{"path": "dir"}, errcode.NotAFile},
		{"workdir root", map[string]any{"path": "."}, errcode.NotAFile},
		{"missing", map[string]any{"path": "nope.txt"}, errcode.PathNotFound},
		{"missing parent", map[string]any{"path": "nodir/a.txt"}, errcode.PathNotFound},
		{"file as parent", map[string]any{"path": "a.txt/x"}, ""}, // NOT_A_DIRECTORY or PATH_NOT_FOUND, see below
		{"unknown workdir", map[string]any{"workdir": "nosuch", "path": "a.txt"}, errcode.UnknownWorkdir},
		{"unknown field", map[string]any{"path": "a.txt", "bogus": 1}, errcode.InvalidArgument},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, code := e.call("read_file", c.args)
			if c.want == "" {
				// Unix reports ENOTDIR; Windows reports the path as not found.
				if code != errcode.NotADirectory && (unix() || code != errcode.PathNotFound) {
					t.Errorf("code %q, want NOT_A_DIRECTORY", code)
				}
				return
			}
			if code != c.want {
				t.Errorf("code %q, want %q", code, c.want)
			}
		})
	}
}

func TestReadFileLimit(t *testing.T) {
	e := newEnv(t, smallLimits) // MaxReadBytes 16
	at := strings.Repeat("a", 16)
	past := strings.Repeat("b", 17)
	e.write("root/at.txt", at)
	e.write("root/past.txt", past)
	e.write("root/big.txt", strings.Repeat("0123456789", 10))

	m := e.ok("read_file", map[string]any{"path": "at.txt"})
	if str(m, "content") != at || !flag(m, "eof") {
		t.Errorf("read at the limit: %q eof=%v", str(m, "content"), m["eof"])
	}
	if str(m, "revision") != "sha256:"+sha([]byte(at)) {
		t.Errorf("revision at the limit = %q, want a content hash", str(m, "revision"))
	}
	e.fail(errcode.FileTooLarge, "read_file", map[string]any{"path": "past.txt"})
	e.fail(errcode.FileTooLarge, "read_file", map[string]any{"path": "past.txt", "length": 17})
	e.fail(errcode.FileTooLarge, "read_file", map[string]any{"path": "big.txt", "offset": 10})

	// Ranges within the limit of larger files succeed.
	for _, r := range []struct{ off, n int }{{0, 16}, {1, 16}, {84, 16}, {90, 100}, {50, 1}} {
		m := e.ok("read_file", map[string]any{"path": "big.txt", "offset": r.off, "length": r.n})
		full := strings.Repeat("0123456789", 10)
		want := full[r.off:min(r.off+r.n, len(full))]
		if str(m, "content") != want {
			t.Errorf("range %v: %q, want %q", r, str(m, "content"), want)
		}
		if int(num(m, "size_bytes")) != 100 {
			t.Errorf("range %v: size_bytes = %v", r, m["size_bytes"])
		}
		if !strings.HasPrefix(str(m, "revision"), "meta:") {
			t.Errorf("revision of a file over the read limit = %q, want meta:…", str(m, "revision"))
		}
	}
	// A file just past the limit can be read in range too.
	m = e.ok("read_file", map[string]any{"path": "past.txt", "offset": 1})
	if str(m, "content") != past[1:] || !flag(m, "eof") {
		t.Errorf("tail of past.txt = %q", str(m, "content"))
	}
}

func TestReadFileWorkdirs(t *testing.T) {
	e := newEnv(t, testLimits, extraWorkdir{alias: "second", dir: "w2"})
	e.write("root/same.txt", "in main")
	e.write("w2/same.txt", "in second")
	e.write("w2/only2/x.txt", "only in second")

	cases := []struct {
		name, workdir, path string
		wantWD, wantContent string
		wantPath            string
	}{
		{"relative means the default", "", "same.txt", "main", "in main", "same.txt"},
		{"alias", "second", "same.txt", "second", "in second", "same.txt"},
		{"alias without case", "SECOND", "same.txt", "second", "in second", "same.txt"},
		{"absolute in the default", "", filepath.Join(e.root, "same.txt"), "main", "in main", "same.txt"},
		{"absolute in the second", "", filepath.Join(e.base, "w2", "same.txt"), "second", "in second", "same.txt"},
		{"absolute nested in the second", "", filepath.Join(e.base, "w2", "only2", "x.txt"), "second", "only in second", "only2/x.txt"},
		{"absolute with matching alias", "second", filepath.Join(e.base, "w2", "same.txt"), "second", "in second", "same.txt"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			args := map[string]any{"path": c.path}
			if c.workdir != "" {
				args["workdir"] = c.workdir
			}
			m := e.ok("read_file", args)
			if str(m, "workdir") != c.wantWD || str(m, "content") != c.wantContent || str(m, "path") != c.wantPath {
				t.Errorf("got %q/%q/%q, want %q/%q/%q", str(m, "workdir"), str(m, "path"), str(m, "content"),
					c.wantWD, c.wantPath, c.wantContent)
			}
		})
	}
	// An absolute path in one workdir named under another alias is outside it.
	e.fail(errcode.PathOutsideRoot, "read_file", map[string]any{"workdir": "main", "path": filepath.Join(e.base, "w2", "same.txt")})
	e.fail(errcode.PathNotFound, "read_file", map[string]any{"path": "only2/x.txt"})
	e.fail(errcode.UnknownWorkdir, "read_file", map[string]any{"workdir": "third", "path": "same.txt"})
}

func TestListWorkdirs(t *testing.T) {
	e := newEnv(t, testLimits, extraWorkdir{alias: "second", dir: "w2"}, extraWorkdir{alias: "ro", dir: "ro", readOnly: true})
	m := e.ok("list_workdirs", map[string]any{})
	wds := list(m, "workdirs")
	if len(wds) != 3 {
		t.Fatalf("workdirs = %v", wds)
	}
	canon := func(p string) string {
		c, err := filepath.EvalSymlinks(p)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	want := []struct {
		alias, path string
		ro, def     bool
	}{
		{"main", canon(e.root), false, true},
		{"second", canon(filepath.Join(e.base, "w2")), false, false},
		{"ro", canon(filepath.Join(e.base, "ro")), true, false},
	}
	for i, w := range want {
		got := wds[i]
		if str(got, "alias") != w.alias || flag(got, "read_only") != w.ro || flag(got, "default") != w.def {
			t.Errorf("workdir %d = %v, want %+v", i, got, w)
		}
		if !strings.EqualFold(str(got, "path"), w.path) {
			t.Errorf("workdir %d path = %q, want %q", i, str(got, "path"), w.path)
		}
		if _, ok := got["case_insensitive"].(bool); !ok {
			t.Errorf("workdir %d has no case_insensitive flag", i)
		}
	}
}
