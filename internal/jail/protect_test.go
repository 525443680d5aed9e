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

// TestGuarded is finding 5 of issue #37: in a workdir holding hostlink's
// program and unit (a workdir of ~, after install.sh), writes replaced
// the program and edited the unit. Guarded paths stay readable; nothing
// replaces, moves, removes or (where they do not exist yet) creates them,
// directly, through a link or another name, and the directories that
// hold them cannot be moved or removed.
func TestGuarded(t *testing.T) {
	base := t.TempDir()
	home := filepath.Join(base, "home")
	bin := filepath.Join(home, ".local", "bin", "hostlink")
	units := filepath.Join(home, ".config", "systemd", "user")
	unit, dropIns := filepath.Join(units, "hostlink.service"), filepath.Join(units, "hostlink.service.d")
	completion := filepath.Join(home, ".local", "share", "bash-completion", "completions", "hostlink")
	os.MkdirAll(filepath.Dir(bin), 0o755)
	os.MkdirAll(units, 0o755)
	write(t, bin, "PROGRAM")
	write(t, unit, "[Service]\nExecStart=hostlink serve\n")
	write(t, filepath.Join(base, "evil"), "EVIL")
	os.MkdirAll(filepath.Join(base, "planted", "bin"), 0o755)
	write(t, filepath.Join(base, "planted", "bin", "hostlink"), "EVIL")
	r, err := Open(base, Options{Guarded: []string{bin, unit, dropIns, completion}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p := func(s string) Path { return mustResolve(t, r, s) }

	f, _, err := r.OpenFile(p("home/.local/bin/hostlink"))
	if err != nil {
		t.Fatalf("reading the program: %v", err)
	}
	f.Close()
	listed := false
	r.WalkDir(p("home/.local"), func(path string, _ fs.DirEntry, err error) error {
		listed = listed || filepath.ToSlash(path) == "home/.local/bin/hostlink"
		return err
	})
	if !listed {
		t.Error("walks do not show the program")
	}

	type op struct {
		what string
		do   func() error
	}
	ops := []op{
		{"replace the program by a rename onto it", func() error { return r.Rename(p("evil"), p("home/.local/bin/hostlink")) }},
		{"move the program away", func() error { return r.Rename(p("home/.local/bin/hostlink"), p("moved")) }},
		{"remove the program", func() error { return r.Remove(p("home/.local/bin/hostlink")) }},
		{"replace the unit", func() error { return r.Rename(p("evil"), p("home/.config/systemd/user/hostlink.service")) }},
		{"create a drop-in directory", func() error { return r.Mkdir(p("home/.config/systemd/user/hostlink.service.d")) }},
		{"create a drop-in", func() error {
			return r.MkdirAll(p("home/.config/systemd/user/hostlink.service.d/x"))
		}},
		{"create a completion not installed yet", func() error {
			if err := r.MkdirAll(p("home/.local/share/bash-completion/completions")); err != nil {
				return err
			}
			return r.RenameNoReplace(p("evil"), p("home/.local/share/bash-completion/completions/hostlink"))
		}},
		{"move the program's directory", func() error { return r.Rename(p("home/.local/bin"), p("oldbin")) }},
		{"move a directory above it", func() error { return r.Rename(p("home/.local"), p("oldlocal")) }},
		{"move another directory into its place", func() error { return r.Rename(p("planted/bin"), p("home/.local/bin")) }},
		{"remove the tree", func() error { return r.RemoveAll(p("home")) }},
		{"remove the units' directory", func() error { return r.RemoveAll(p("home/.config/systemd")) }},
	}
	if runtime.GOOS != "windows" {
		os.Symlink("home/.local/bin", filepath.Join(base, "binlink"))
		os.Symlink("binlink/../bin/hostlink", filepath.Join(base, "home", ".local", "dotdot"))
		if err := os.Link(bin, filepath.Join(base, "hardlink")); err != nil {
			t.Fatal(err)
		}
		ops = append(ops,
			op{"replace the program through a link to its directory", func() error { return r.Rename(p("evil"), p("binlink/hostlink")) }},
			op{"remove the program through a link to its directory", func() error { return r.Remove(p("binlink/hostlink")) }},
			op{"replace the program through another name of it", func() error { return r.Rename(p("evil"), p("hardlink")) }},
		)
	}
	for _, o := range ops {
		if err := o.do(); errcode.CodeOf(err) != errcode.ReadOnly && errcode.CodeOf(err) != errcode.PathOutsideRoot {
			t.Errorf("%s: %v, want it refused", o.what, err)
		}
	}
	if b, _ := os.ReadFile(bin); string(b) != "PROGRAM" {
		t.Errorf("the program is now %q", b)
	}
	if b, _ := os.ReadFile(unit); string(b) != "[Service]\nExecStart=hostlink serve\n" {
		t.Errorf("the unit is now %q", b)
	}
	for _, missing := range []string{dropIns, completion} {
		if _, err := os.Lstat(missing); err == nil {
			t.Errorf("%s was created", missing)
		}
	}
	// Beside them, and around them, work goes on.
	for _, o := range []op{
		{"write beside the program", func() error {
			f, tmp, err := r.CreateTemp(p("home/.local/bin"))
			if err != nil {
				return err
			}
			f.Close()
			return r.Rename(tmp, p("home/.local/bin/other"))
		}},
		{"make a directory beside the unit", func() error { return r.Mkdir(p("home/.config/systemd/user/other.d")) }},
		{"remove a file beside the program", func() error { return r.Remove(p("home/.local/bin/other")) }},
	} {
		if err := o.do(); err != nil {
			t.Errorf("%s: %v", o.what, err)
		}
	}
	if runtime.GOOS != "windows" {
		// A link to the program is not the program: it may go.
		if err := r.Remove(p("home/.local/dotdot")); err != nil {
			t.Errorf("removing a link to the program: %v", err)
		}
	}
}

// TestGuardedDirectory: below an existing guarded directory (a unit's
// drop-ins) nothing is created or changed, temporary files included, and
// a root inside one is read-only for these operations.
func TestGuardedDirectory(t *testing.T) {
	base := t.TempDir()
	dropIns := filepath.Join(base, "hostlink.service.d")
	os.MkdirAll(dropIns, 0o755)
	write(t, filepath.Join(dropIns, "a.conf"), "[Service]\n")
	write(t, filepath.Join(base, "evil"), "EVIL")
	r, err := Open(base, Options{Guarded: []string{dropIns}})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	p := func(s string) Path { return mustResolve(t, r, s) }
	if _, _, err := r.CreateTemp(p("hostlink.service.d")); errcode.CodeOf(err) != errcode.ReadOnly {
		t.Errorf("CreateTemp: %v, want READ_ONLY", err)
	}
	if err := r.Rename(p("evil"), p("hostlink.service.d/b.conf")); errcode.CodeOf(err) != errcode.ReadOnly {
		t.Errorf("Rename into: %v, want READ_ONLY", err)
	}
	if err := r.Remove(p("hostlink.service.d/a.conf")); errcode.CodeOf(err) != errcode.ReadOnly {
		t.Errorf("Remove below: %v, want READ_ONLY", err)
	}
	inner, err := Open(dropIns, Options{Guarded: []string{dropIns}})
	if err != nil {
		t.Fatal(err)
	}
	defer inner.Close()
	if err := inner.Remove(mustResolve(t, inner, "a.conf")); errcode.CodeOf(err) != errcode.ReadOnly {
		t.Errorf("Remove in a root inside it: %v, want READ_ONLY", err)
	}
	if f, _, err := inner.OpenFile(mustResolve(t, inner, "a.conf")); err != nil {
		t.Errorf("reading in a root inside it: %v", err)
	} else {
		f.Close()
	}
	if ents, _ := os.ReadDir(dropIns); len(ents) != 1 {
		t.Errorf("the drop-in directory changed: %v", ents)
	}
}

// TestReplacedProtectedFile: a protected or guarded file replaced since
// Open (a configuration saved atomically, an updated program) gives up its
// old identity: the old object, now an ordinary file in the workdir (or
// any new file given its recycled inode number), is not hostlink's, while
// the new file at the protected path still is, by its path.
func TestReplacedProtectedFile(t *testing.T) {
	for _, kind := range []string{"protected", "guarded"} {
		t.Run(kind, func(t *testing.T) {
			base := t.TempDir()
			own := filepath.Join(base, "own.toml")
			os.WriteFile(own, []byte("old"), 0o600)
			opts := Options{Protected: []string{own}}
			want := errcode.PathOutsideRoot
			if kind == "guarded" {
				opts = Options{Guarded: []string{own}}
				want = errcode.ReadOnly
			}
			r, err := Open(base, opts)
			if err != nil {
				t.Fatal(err)
			}
			defer r.Close()
			// Replace it the way an atomic save does, keeping the old
			// object under another name in the workdir.
			if err := os.Rename(own, filepath.Join(base, "plain.txt")); err != nil {
				t.Fatal(err)
			}
			os.WriteFile(own, []byte("new"), 0o600)
			plain := mustResolve(t, r, "plain.txt")
			if f, _, err := r.OpenFile(plain); err != nil {
				t.Errorf("the old object, now an ordinary file: %v", err)
			} else {
				f.Close()
			}
			if err := r.Remove(plain); err != nil {
				t.Errorf("removing the old object: %v", err)
			}
			jp, err := r.Resolve("own.toml")
			if err == nil {
				err = r.Remove(jp)
			}
			if errcode.CodeOf(err) != want {
				t.Errorf("removing the new file at the protected path: %v, want %s", err, want)
			}
		})
	}
}
