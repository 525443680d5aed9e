package jail

import (
	"io"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/hostlink/hostlink/internal/errcode"
)

// sandbox makes base/{root,outside} with a secret outside and a few
// symlinks inside the root. It returns the opened root and the base dir.
// Where the OS refuses symlinks (Windows without the privilege, Wine), the
// tests that need them skip; the rest run without the links.
func sandbox(t *testing.T) (*Root, string) {
	r, base, ok := sandboxMaybeLinks(t)
	if !ok {
		t.Skip("symlinks unavailable on this system")
	}
	return r, base
}

func sandboxMaybeLinks(t *testing.T) (*Root, string, bool) {
	t.Helper()
	base := t.TempDir()
	for _, d := range []string{"root/sub", "outside"} {
		if err := os.MkdirAll(filepath.Join(base, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	write(t, filepath.Join(base, "outside", "secret.txt"), "secret")
	write(t, filepath.Join(base, "root", "sub", "in.txt"), "inside")
	links := map[string]string{
		"root/out":      filepath.Join("..", "outside"),
		"root/out-abs":  filepath.Join(base, "outside", "secret.txt"),
		"root/chain1":   "chain2",
		"root/chain2":   filepath.Join("..", "outside"),
		"root/in":       filepath.Join("sub", "in.txt"),
		"root/in-abs":   filepath.Join(base, "root", "sub"),
		"root/sub/up":   "..",
		"root/sub/up2":  filepath.Join("..", ".."),
		"root/dangling": "nothing-here",
		"root/loop":     "loop",
	}
	symlinks := true
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(base, name)); err != nil {
			if runtime.GOOS != "windows" {
				t.Fatal(err)
			}
			symlinks = false
			break
		}
	}
	r, err := Open(filepath.Join(base, "root"), Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { r.Close() })
	return r, base, symlinks
}

func write(t *testing.T, name, content string) {
	t.Helper()
	if err := os.WriteFile(name, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func mustResolve(t *testing.T, r *Root, p string) Path {
	t.Helper()
	jp, err := r.Resolve(p)
	if err != nil {
		t.Fatalf("Resolve(%q): %v", p, err)
	}
	return jp
}

// TestCanonical: symlinks are followed as the kernel follows them, and an
// absolute target is refused even when it points back inside (as openat2's
// RESOLVE_BENEATH refuses it).
func TestCanonical(t *testing.T) {
	r, _ := sandbox(t)
	for _, tt := range []struct {
		in, want string
		code     errcode.Code
	}{
		{"in", "sub/in.txt", ""},
		{"in-abs/in.txt", "", errcode.PathOutsideRoot},
		{"sub/up/in", "sub/in.txt", ""},
		{"sub/up/sub/up/in", "sub/in.txt", ""},
		{"dangling", "nothing-here", ""},
		{"missing/x", "missing/x", ""},
		{"out", "", errcode.PathOutsideRoot},
		{"out-abs", "", errcode.PathOutsideRoot},
		{"chain1", "", errcode.PathOutsideRoot},
		{"chain1/secret.txt", "", errcode.PathOutsideRoot},
		{"sub/up2", "", errcode.PathOutsideRoot},
		{"loop", "", errcode.PathOutsideRoot},
	} {
		got, err := r.Canonical(mustResolve(t, r, tt.in))
		if errcode.CodeOf(err) != tt.code || (err == nil && got.String() != tt.want) {
			t.Errorf("Canonical(%q) = %q, %v; want %q, %q", tt.in, got, err, tt.want, tt.code)
		}
	}
}

func TestSymlinksOutAreRefused(t *testing.T) {
	r, base := sandbox(t)
	for _, p := range []string{"out", "out-abs", "chain1", "chain2", "sub/up2"} {
		jp := mustResolve(t, r, p)
		if _, err := r.Lstat(jp); errcode.CodeOf(err) != errcode.PathOutsideRoot {
			t.Errorf("Lstat(%s) = %v", p, err)
		}
		if _, _, err := r.OpenFile(jp); errcode.CodeOf(err) != errcode.PathOutsideRoot {
			t.Errorf("OpenFile(%s) = %v", p, err)
		}
		if err := r.Remove(jp); errcode.CodeOf(err) != errcode.PathOutsideRoot {
			t.Errorf("Remove(%s) = %v", p, err)
		}
		if err := r.Rename(jp, mustResolve(t, r, "moved")); errcode.CodeOf(err) != errcode.PathOutsideRoot {
			t.Errorf("Rename(%s) = %v", p, err)
		}
		if _, err := r.Canonical(jp); errcode.CodeOf(err) != errcode.PathOutsideRoot {
			t.Errorf("Canonical(%s) = %v", p, err)
		}
	}
	if err := r.MkdirAll(mustResolve(t, r, "out/newdir/x")); errcode.CodeOf(err) != errcode.PathOutsideRoot {
		t.Errorf("MkdirAll through out = %v", err)
	}
	if _, err := os.Stat(filepath.Join(base, "outside", "newdir")); !os.IsNotExist(err) {
		t.Errorf("MkdirAll created a directory outside the root")
	}
	if _, _, err := r.CreateTemp(mustResolve(t, r, "out")); errcode.CodeOf(err) != errcode.PathOutsideRoot {
		t.Errorf("CreateTemp in out = %v", err)
	}
	got, _ := os.ReadFile(filepath.Join(base, "outside", "secret.txt"))
	if string(got) != "secret" {
		t.Fatal("outside file changed")
	}
	ents, _ := os.ReadDir(filepath.Join(base, "outside"))
	if len(ents) != 1 {
		t.Fatalf("outside dir has %d entries, want 1", len(ents))
	}
}

func TestSymlinksInsideWork(t *testing.T) {
	r, _ := sandbox(t)
	f, fi, err := r.OpenFile(mustResolve(t, r, "in"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	b, _ := io.ReadAll(f)
	if string(b) != "inside" || fi.Size() != 6 {
		t.Fatalf("read %q", b)
	}
	if got, err := r.Canonical(mustResolve(t, r, "dangling")); err != nil || got.String() != "nothing-here" {
		t.Errorf("dangling link: %q, %v", got, err)
	}
}

func TestReadOnly(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "f"), "x")
	r, err := Open(dir, Options{ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p := mustResolve(t, r, "f")
	for name, fn := range map[string]func() error{
		"Remove":          func() error { return r.Remove(p) },
		"RemoveAll":       func() error { return r.RemoveAll(p) },
		"Mkdir":           func() error { return r.Mkdir(mustResolve(t, r, "d")) },
		"MkdirAll":        func() error { return r.MkdirAll(mustResolve(t, r, "d/e")) },
		"Rename":          func() error { return r.Rename(p, mustResolve(t, r, "g")) },
		"RenameNoReplace": func() error { return r.RenameNoReplace(p, mustResolve(t, r, "g")) },
		"CreateTemp": func() error {
			_, _, err := r.CreateTemp(mustResolve(t, r, "."))
			return err
		},
	} {
		if err := fn(); errcode.CodeOf(err) != errcode.ReadOnly {
			t.Errorf("%s on read-only root = %v", name, err)
		}
	}
	if _, err := os.Stat(filepath.Join(dir, "f")); err != nil {
		t.Fatal("file gone from read-only root")
	}
}

func TestRootItselfIsImmutable(t *testing.T) {
	r, _, _ := sandboxMaybeLinks(t)
	root := mustResolve(t, r, ".")
	if err := r.RemoveAll(root); errcode.CodeOf(err) != errcode.InvalidArgument {
		t.Fatalf("RemoveAll(.) = %v", err)
	}
	if _, err := os.Stat(r.Dir()); err != nil {
		t.Fatal(err)
	}
}

func TestAbsoluteFormsOfRoot(t *testing.T) {
	base := t.TempDir()
	real := filepath.Join(base, "real")
	os.Mkdir(real, 0o755)
	alias := filepath.Join(base, "alias")
	if err := os.Symlink(real, alias); err != nil {
		t.Skipf("symlinks unavailable: %v", err)
	}
	r, err := Open(alias, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, p := range []string{filepath.Join(real, "x"), filepath.Join(alias, "x")} {
		if got, err := r.Resolve(p); err != nil || got.String() != "x" {
			t.Errorf("Resolve(%q) = %q, %v", p, got, err)
		}
	}
	if _, err := r.Resolve(filepath.Join(base, "x")); errcode.CodeOf(err) != errcode.PathOutsideRoot {
		t.Errorf("sibling resolved: %v", err)
	}
}

func TestCaseProbe(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "MixedCase")
	os.Mkdir(dir, 0o755)
	r, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	_, statErr := os.Stat(filepath.Join(filepath.Dir(dir), "mixedcase"))
	if want := statErr == nil; r.CaseInsensitive() != want {
		t.Fatalf("CaseInsensitive = %v, but the volume says %v", r.CaseInsensitive(), want)
	}
	// A root whose name has no letters is probed with a temporary file,
	// which must not be left behind.
	digits := filepath.Join(t.TempDir(), "1234")
	os.Mkdir(digits, 0o755)
	r2, err := Open(digits, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r2.Close()
	if r2.CaseInsensitive() != r.CaseInsensitive() {
		t.Errorf("probe by file = %v, by name = %v", r2.CaseInsensitive(), r.CaseInsensitive())
	}
	if ents, _ := os.ReadDir(digits); len(ents) != 0 {
		t.Errorf("probe left %d files", len(ents))
	}
}
