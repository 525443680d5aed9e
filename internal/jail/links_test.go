package jail

import (
	"io"
	"os"
	"path/filepath"
	"testing"

	"github.com/hostlink/hostlink/internal/errcode"
)

// TestHardlinks is finding 11 of issue #16: a hard link inside the root to
// a file outside it read that file. A regular file with more than one
// link is refused for reading (and so for editing, which reads) unless the
// root allows hard links; its metadata stays visible and a write replaces
// the name, leaving the other file alone.
func TestHardlinks(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	os.MkdirAll(filepath.Join(root, "sub"), 0o755)
	os.MkdirAll(filepath.Join(base, "outside"), 0o755)
	secret := filepath.Join(base, "outside", "secret.txt")
	write(t, secret, "SECRET")
	write(t, filepath.Join(root, "one.txt"), "one")
	for _, name := range []string{"hl.txt", "sub/hl.txt"} {
		if err := os.Link(secret, filepath.Join(root, name)); err != nil {
			t.Skipf("hard links unavailable: %v", err)
		}
	}
	for _, allow := range []bool{false, true} {
		r, err := Open(root, Options{Hardlinks: allow})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		read := func(f *os.File, fi any, err error) (string, error) {
			if err != nil {
				return "", err
			}
			defer f.Close()
			b, _ := io.ReadAll(f)
			return string(b), nil
		}
		sub, err := r.OpenDirectory(mustResolve(t, r, "sub"))
		if err != nil {
			t.Fatal(err)
		}
		defer sub.Close()
		for what, open := range map[string]func() (*os.File, any, error){
			"OpenFile":     func() (*os.File, any, error) { return r.OpenFile(mustResolve(t, r, "hl.txt")) },
			"Dir.OpenFile": func() (*os.File, any, error) { return sub.OpenFile("hl.txt") },
		} {
			got, err := read(open())
			switch {
			case allow && (err != nil || got != "SECRET"):
				t.Errorf("hardlinks allowed: %s = %q, %v", what, got, err)
			case !allow && errcode.CodeOf(err) != HardlinkRefused:
				t.Errorf("%s of a file with 3 links = %q, %v; want HARDLINK_REFUSED", what, got, err)
			}
		}
		if got, err := read(func() (*os.File, any, error) { return r.OpenFile(mustResolve(t, r, "one.txt")) }()); err != nil || got != "one" {
			t.Errorf("a file with one link: %q, %v", got, err)
		}
		if fi, err := r.Stat(mustResolve(t, r, "hl.txt")); err != nil || fi.Size() != 6 {
			t.Errorf("Stat of a hard link: %v, %v", fi, err)
		}
	}
	// A write replaces the name: the other file keeps its content.
	r, _ := Open(root, Options{})
	defer r.Close()
	f, tp, err := r.CreateTemp(mustResolve(t, r, "."))
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("new")
	f.Close()
	if err := r.Rename(tp, mustResolve(t, r, "hl.txt")); err != nil {
		t.Fatal(err)
	}
	if b, _ := os.ReadFile(secret); string(b) != "SECRET" {
		t.Errorf("the outside file is now %q", b)
	}
}
