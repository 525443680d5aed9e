package files

import (
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/errcode"
)

func TestStatBasic(t *testing.T) {
	e := newEnv(t, testLimits)
	e.write("root/sub/f.txt", "twelve bytes")
	e.write("root/page.html", "<p>")
	os.MkdirAll(filepath.Join(e.root, "dir"), 0o755)
	mt := time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	os.Chtimes(filepath.Join(e.root, "sub", "f.txt"), mt, mt)
	if unix() {
		os.Chmod(filepath.Join(e.root, "sub", "f.txt"), 0o640)
		os.Chmod(filepath.Join(e.root, "dir"), 0o750)
	}

	f := e.ok("stat", map[string]any{"path": "sub/f.txt"})
	if !flag(f, "exists") || !flag(f, "is_file") || flag(f, "is_dir") || flag(f, "is_symlink") {
		t.Errorf("file flags: %v", f)
	}
	if int(num(f, "size_bytes")) != 12 || str(f, "path") != "sub/f.txt" || str(f, "workdir") != "main" {
		t.Errorf("file size/path: %v", f)
	}
	if math.Abs(num(f, "mtime")-float64(mt.Unix())) > 1e-3 {
		t.Errorf("mtime = %f, want %d", num(f, "mtime"), mt.Unix())
	}
	if str(f, "revision") != "sha256:"+sha([]byte("twelve bytes")) {
		t.Errorf("revision = %q", str(f, "revision"))
	}
	if r := e.ok("read_file", map[string]any{"path": "sub/f.txt"}); str(r, "revision") != str(f, "revision") {
		t.Errorf("stat revision %q != read_file revision %q", str(f, "revision"), str(r, "revision"))
	}
	canon, _ := filepath.EvalSymlinks(filepath.Join(e.root, "sub", "f.txt"))
	if !strings.EqualFold(str(f, "absolute_path"), canon) {
		t.Errorf("absolute_path = %q, want %q", str(f, "absolute_path"), canon)
	}
	if h := e.ok("stat", map[string]any{"path": "page.html"}); !strings.HasPrefix(str(h, "mime_type"), "text/html") {
		t.Errorf("html mime_type = %q", str(h, "mime_type"))
	}
	if unix() {
		if str(f, "mode") != "0640" {
			t.Errorf("file mode = %q, want 0640", str(f, "mode"))
		}
		if _, ok := f["owner_uid"].(float64); !ok {
			t.Errorf("owner_uid missing: %v", f)
		}
	}

	d := e.ok("stat", map[string]any{"path": "dir"})
	if !flag(d, "exists") || flag(d, "is_file") || !flag(d, "is_dir") || str(d, "revision") != "" {
		t.Errorf("dir: %v", d)
	}
	if unix() && str(d, "mode") != "0750" {
		t.Errorf("dir mode = %q, want 0750", str(d, "mode"))
	}
	root := e.ok("stat", map[string]any{"path": "."})
	if !flag(root, "is_dir") || str(root, "path") != "." {
		t.Errorf("root: %v", root)
	}

	for _, p := range []string{"missing.txt", "missing/deeper/x", "sub/missing"} {
		m := e.ok("stat", map[string]any{"path": p})
		if flag(m, "exists") || flag(m, "is_file") || flag(m, "is_dir") || num(m, "size_bytes") != 0 {
			t.Errorf("stat %s: %v, want exists=false", p, m)
		}
	}
	e.fail(errcode.UnknownWorkdir, "stat", map[string]any{"workdir": "x", "path": "sub"})
	e.fail(errcode.PathOutsideRoot, "stat", map[string]any{"path": "../outside"})
}

func TestStatSymlinks(t *testing.T) {
	e := newEnv(t, testLimits)
	e.write("root/target.txt", "0123456789") // 10 bytes
	os.MkdirAll(filepath.Join(e.root, "tdir"), 0o755)
	os.MkdirAll(filepath.Join(e.root, "sub"), 0o755)
	e.write("outside/secret.txt", "secret")
	e.symlink("target.txt", "root/link")
	e.symlink("../target.txt", "root/sub/uplink")
	e.symlink("tdir", "root/dirlink")
	e.symlink("missing.txt", "root/dangling")
	e.symlink("../outside/secret.txt", "root/outlink")

	follow := func(p string, f bool) map[string]any {
		return e.ok("stat", map[string]any{"path": p, "follow_symlinks": f})
	}
	cases := []struct {
		name, path            string
		follow                bool
		exists, isFile, isDir bool
		linkTarget            string
		size                  int // -1: don't check
		wantPath              string
		wantRevision          bool
	}{
		{"link followed", "link", true, true, true, false, "target.txt", 10, "target.txt", true},
		{"link not followed", "link", false, true, false, false, "target.txt", -1, "link", false},
		{"uplink followed", "sub/uplink", true, true, true, false, "target.txt", 10, "target.txt", true},
		{"uplink not followed", "sub/uplink", false, true, false, false, "target.txt", -1, "sub/uplink", false},
		{"dir link followed", "dirlink", true, true, false, true, "tdir", -1, "tdir", false},
		{"dir link not followed", "dirlink", false, true, false, false, "tdir", -1, "dirlink", false},
		{"dangling followed", "dangling", true, false, false, false, "missing.txt", 0, "missing.txt", false},
		{"dangling not followed", "dangling", false, true, false, false, "missing.txt", -1, "dangling", false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			m := follow(c.path, c.follow)
			if !flag(m, "is_symlink") {
				t.Errorf("is_symlink false: %v", m)
			}
			if flag(m, "exists") != c.exists || flag(m, "is_file") != c.isFile || flag(m, "is_dir") != c.isDir {
				t.Errorf("exists/is_file/is_dir = %v/%v/%v, want %v/%v/%v", m["exists"], m["is_file"], m["is_dir"],
					c.exists, c.isFile, c.isDir)
			}
			if str(m, "link_target") != c.linkTarget {
				t.Errorf("link_target = %q, want %q", str(m, "link_target"), c.linkTarget)
			}
			if c.size >= 0 && int(num(m, "size_bytes")) != c.size {
				t.Errorf("size_bytes = %v, want %d", m["size_bytes"], c.size)
			}
			if str(m, "path") != c.wantPath {
				t.Errorf("path = %q, want %q", str(m, "path"), c.wantPath)
			}
			if (str(m, "revision") != "") != c.wantRevision {
				t.Errorf("revision = %q", str(m, "revision"))
			}
			if c.wantRevision && str(m, "revision") != "sha256:"+sha([]byte("0123456789")) {
				t.Errorf("revision = %q, want the target's", str(m, "revision"))
			}
		})
	}
	// A link leading out is refused whether followed or not.
	e.fail(errcode.PathOutsideRoot, "stat", map[string]any{"path": "outlink"})
	e.fail(errcode.PathOutsideRoot, "stat", map[string]any{"path": "outlink", "follow_symlinks": false})
}
