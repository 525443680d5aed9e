package jail

import (
	"errors"
	"io"
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

// TestProtectedThroughLinkDotDot is finding 1 of issue #16: in a root
// holding hostlink's home, s -> home/state, t -> s/../state/http.token and
// u -> s/../config reached the token and the configuration, because the
// protection check applied the ".." of a link's target before expanding s
// while the open expanded s first. Every operation must refuse them.
func TestProtectedThroughLinkDotDot(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("symlinks need a privilege on Windows (and Windows applies .. lexically)")
	}
	base := t.TempDir()
	home := filepath.Join(base, "home")
	cfg, state := filepath.Join(home, "config"), filepath.Join(home, "state")
	os.MkdirAll(cfg, 0o700)
	os.MkdirAll(state, 0o700)
	write(t, filepath.Join(cfg, "config.toml"), "[commands]\nenabled = false\n")
	write(t, filepath.Join(state, "http.token"), "TOKEN")
	write(t, filepath.Join(base, "p.toml"), "[commands]\nenabled = true\n")
	links := map[string]string{
		"s":  "home/state",
		"t":  "s/../state/http.token",
		"u":  "s/../config",
		"v":  "s/..",
		"w":  "s/../state/newdir",
		"sa": state, // absolute: refused as any absolute target
	}
	for name, target := range links {
		if err := os.Symlink(target, filepath.Join(base, name)); err != nil {
			t.Fatal(err)
		}
	}
	r, err := Open(base, Options{Protected: []string{cfg, state}})
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
	p := func(s string) Path { return mustResolve(t, r, s) }
	for _, s := range []string{"t", "u/config.toml", "v/state/http.token", "sa/http.token", "s/http.token"} {
		f, _, err := r.OpenFile(p(s))
		if err == nil {
			b, _ := io.ReadAll(f)
			f.Close()
			t.Errorf("OpenFile(%s) read %q", s, b)
		}
		refused("OpenFile "+s, err)
		_, err = r.Stat(p(s))
		refused("Stat "+s, err)
		_, err = r.Lstat(p(s))
		refused("Lstat "+s, err)
	}
	for _, s := range []string{"u", "v/config", "s"} {
		_, err := r.OpenDirectory(p(s))
		refused("OpenDirectory "+s, err)
		_, _, err = r.CreateTemp(p(s))
		refused("CreateTemp "+s, err)
		refused("Mkdir "+s+"/x", r.Mkdir(p(s+"/x")))
		refused("MkdirAll "+s+"/x/y", r.MkdirAll(p(s+"/x/y")))
	}
	refused("Rename p.toml u/config.toml", r.Rename(p("p.toml"), p("u/config.toml")))
	refused("Rename p.toml v/config/config.toml", r.Rename(p("p.toml"), p("v/config/config.toml")))
	refused("Rename u/config.toml out", r.Rename(p("u/config.toml"), p("stolen.toml")))
	refused("Remove u/config.toml", r.Remove(p("u/config.toml")))
	refused("RemoveAll v/state", r.RemoveAll(p("v/state")))
	refused("Mkdir w", r.Mkdir(p("w")))
	refused("MkdirAll w/x", r.MkdirAll(p("w/x")))
	refused("Rename home", r.Rename(p("home"), p("elsewhere")))
	refused("RemoveAll home", r.RemoveAll(p("home")))
	if b, _ := os.ReadFile(filepath.Join(cfg, "config.toml")); string(b) != "[commands]\nenabled = false\n" {
		t.Errorf("config.toml is now %q", b)
	}
	if ents, _ := os.ReadDir(state); len(ents) != 1 {
		t.Errorf("the state directory changed: %v", ents)
	}
	if _, err := os.Stat(filepath.Join(base, "p.toml")); err != nil {
		t.Errorf("p.toml was moved: %v", err)
	}
}

// TestProtectedAncestors: a directory holding a protected one cannot be
// moved or removed, nor can another be moved into its place, even before
// the protected directory exists.
func TestProtectedAncestors(t *testing.T) {
	base := t.TempDir()
	home := filepath.Join(base, "home")
	os.MkdirAll(filepath.Join(home, "state"), 0o700)
	os.MkdirAll(filepath.Join(base, "planted", "logs"), 0o755)
	r, err := Open(base, Options{Protected: []string{filepath.Join(home, "state"), filepath.Join(base, "later", "logs")}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p := func(s string) Path { return mustResolve(t, r, s) }
	if err := r.Mkdir(p("later")); err != nil {
		t.Errorf("a directory on the way to a protected one may be made: %v", err)
	}
	for _, tc := range []struct {
		what string
		do   func() error
	}{
		{"Rename home", func() error { return r.Rename(p("home"), p("moved")) }},
		{"RenameNoReplace home", func() error { return r.RenameNoReplace(p("home"), p("moved")) }},
		{"RemoveAll home", func() error { return r.RemoveAll(p("home")) }},
		{"Remove later", func() error { return r.Remove(p("later")) }},
		{"Rename planted over later", func() error { return r.Rename(p("planted"), p("later")) }},
		{"Mkdir later/logs", func() error { return r.Mkdir(Path{"later/logs"}) }},
		{"MkdirAll later/logs/x", func() error { return r.MkdirAll(Path{"later/logs/x"}) }},
	} {
		if err := tc.do(); errcode.CodeOf(err) != errcode.PathOutsideRoot {
			t.Errorf("%s: %v, want PATH_OUTSIDE_ALLOWED_ROOT", tc.what, err)
		}
	}
	if _, err := os.Stat(filepath.Join(home, "state")); err != nil {
		t.Fatal(err)
	}
}
