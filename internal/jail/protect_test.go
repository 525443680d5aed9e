package jail

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"testing"

	"github.com/hostlink/hostlink/internal/errcode"
)

// TestProtected: a protected directory inside the root cannot be reached
// by any path, directly, absolutely or through a symlink, and walks do not
// see it.
func TestProtected(t *testing.T) {
	base := t.TempDir()
	cfg := filepath.Join(base, ".config", "hostlink")
	os.MkdirAll(cfg, 0o700)
	os.WriteFile(filepath.Join(cfg, "config.toml"), []byte("[policy]\n"), 0o600)
	os.WriteFile(filepath.Join(base, "ok.txt"), []byte("ok"), 0o600)
	r, err := Open(base, Options{Protected: []string{cfg}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	refused := func(what string, err error) {
		t.Helper()
		if errcode.CodeOf(err) != errcode.PathOutsideRoot {
			t.Errorf("%s: %v, want PATH_OUTSIDE_ALLOWED_ROOT", what, err)
		}
	}
	for _, p := range []string{".config/hostlink", ".config/hostlink/config.toml", ".config/./hostlink/x", filepath.Join(cfg, "config.toml")} {
		_, err := r.Resolve(p)
		refused("Resolve "+p, err)
	}
	parent, err := r.Resolve(".config")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Stat(parent); err != nil {
		t.Fatalf("the parent stays reachable: %v", err)
	}
	if runtime.GOOS != "windows" {
		os.Symlink(".config/hostlink", filepath.Join(base, "link"))
		os.Symlink(".config/hostlink/config.toml", filepath.Join(base, "cfglink"))
		for _, p := range []string{"link/config.toml", "cfglink"} {
			jp, err := r.Resolve(p)
			if err != nil {
				t.Fatal(err)
			}
			_, _, err = r.OpenFile(jp)
			refused("OpenFile "+p, err)
			_, err = r.Stat(jp)
			refused("Stat "+p, err)
			refused("Remove "+p, r.Remove(jp))
		}
		dst, _ := r.Resolve("link/new.txt")
		tmp, _ := r.Resolve("ok.txt")
		refused("Rename into", r.Rename(tmp, dst))
		d, _ := r.Resolve("link")
		_, _, err := r.CreateTemp(d)
		refused("CreateTemp", err)
	}
	err = r.WalkDir(Path{"."}, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == ".config/hostlink" || filepath.ToSlash(p) == ".config/hostlink/config.toml" {
			return errors.New("walk reached " + p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}
