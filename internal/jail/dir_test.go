package jail

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/hostlink/hostlink/internal/errcode"
)

// TestDirOpenFile opens files by name through a Dir: regular files open,
// and every name or link that would leave the root, reach a protected
// directory or is not a regular file is refused, as through Root.OpenFile.
func TestDirOpenFile(t *testing.T) {
	r, base := sandbox(t)
	root := filepath.Join(base, "root")
	write(t, filepath.Join(root, "top.txt"), "top")
	os.Symlink("in.txt", filepath.Join(root, "sub", "sibling"))

	top, err := r.OpenDirectory(mustResolve(t, r, "."))
	if err != nil {
		t.Fatal(err)
	}
	defer top.Close()
	sub, err := r.OpenDirectory(mustResolve(t, r, "sub"))
	if err != nil {
		t.Fatal(err)
	}
	defer sub.Close()
	if sub.Path().String() != "sub" {
		t.Fatalf("Path() = %q", sub.Path())
	}

	read := func(d *Dir, name string) (string, error) {
		f, fi, err := d.OpenFile(name)
		if err != nil {
			return "", err
		}
		defer f.Close()
		b, _ := io.ReadAll(f)
		if fi.Size() != int64(len(b)) {
			t.Errorf("%s: size %d, read %d", name, fi.Size(), len(b))
		}
		return string(b), nil
	}
	for _, tc := range []struct {
		d    *Dir
		name string
		want string
	}{{top, "top.txt", "top"}, {sub, "in.txt", "inside"}, {sub, "sibling", "inside"}, {top, "in", "inside"}} {
		got, err := read(tc.d, tc.name)
		if err != nil || got != tc.want {
			t.Errorf("%s/%s: %q, %v", tc.d.Path(), tc.name, got, err)
		}
	}
	for _, tc := range []struct {
		d    *Dir
		name string
		code errcode.Code
	}{
		{top, "out-abs", errcode.PathOutsideRoot},
		{top, "chain1", errcode.PathOutsideRoot},
		{sub, "up", errcode.NotAFile}, // the root: resolved from the root, as any path
		{top, "sub", errcode.NotAFile},
		{top, "missing", errcode.PathNotFound},
		{top, "sub/in.txt", errcode.InvalidArgument},
		{top, "..", errcode.InvalidArgument},
		{top, ".", errcode.InvalidArgument},
		{top, "", errcode.InvalidArgument},
	} {
		if _, err := read(tc.d, tc.name); errcode.CodeOf(err) != tc.code {
			t.Errorf("%s/%s: %v, want %s", tc.d.Path(), tc.name, err, tc.code)
		}
	}
	if _, err := r.OpenDirectory(mustResolve(t, r, "out")); errcode.CodeOf(err) != errcode.PathOutsideRoot {
		t.Errorf("OpenDirectory through a link out: %v", err)
	}
	if _, err := r.OpenDirectory(mustResolve(t, r, "top.txt")); err == nil {
		t.Error("OpenDirectory of a file succeeded")
	}
}

// TestDirProtected: a Dir above a protected directory does not open a
// file in it through a link.
func TestDirProtected(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need a privilege on Windows")
	}
	base := t.TempDir()
	cfg := filepath.Join(base, ".config", "hostlink")
	os.MkdirAll(cfg, 0o700)
	write(t, filepath.Join(cfg, "config.toml"), "[policy]\n")
	os.Symlink(".config/hostlink/config.toml", filepath.Join(base, "cfglink"))
	r, err := Open(base, Options{Protected: []string{cfg}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	d, err := r.OpenDirectory(mustResolve(t, r, "."))
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	if _, _, err := d.OpenFile("cfglink"); errcode.CodeOf(err) != errcode.PathOutsideRoot {
		t.Errorf("OpenFile through a link into a protected directory: %v", err)
	}
	if _, err := r.OpenDirectory(Path{".config/hostlink"}); errcode.CodeOf(err) != errcode.PathOutsideRoot {
		t.Errorf("OpenDirectory of a protected directory: %v", err)
	}
}
