package release

import (
	"archive/tar"
	"archive/zip"
	"compress/gzip"
	"debug/buildinfo"
	"debug/elf"
	"debug/macho"
	"debug/pe"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/tstest"
	"github.com/hostlink/hostlink/internal/version"
)

// unpack extracts an archive into a new directory and returns it.
func unpack(t *testing.T, path string) string {
	t.Helper()
	dir := t.TempDir()
	write := func(name string, mode os.FileMode, r io.Reader) {
		if !filepath.IsLocal(name) {
			t.Fatalf("%s: entry %q is outside the archive", path, name)
		}
		dst := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(dst, os.O_CREATE|os.O_EXCL|os.O_WRONLY, mode.Perm())
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		if _, err := io.Copy(f, r); err != nil {
			t.Fatal(err)
		}
	}
	if strings.HasSuffix(path, ".zip") {
		zr, err := zip.OpenReader(path)
		if err != nil {
			t.Fatal(err)
		}
		defer zr.Close()
		for _, f := range zr.File {
			if f.FileInfo().IsDir() {
				continue
			}
			rc, err := f.Open()
			if err != nil {
				t.Fatal(err)
			}
			write(f.Name, f.Mode(), rc)
			rc.Close()
		}
		return dir
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if h.Typeflag == tar.TypeReg {
			write(h.Name, h.FileInfo().Mode(), tr)
		}
	}
	return dir
}

// checkStatic fails unless the binary is for goos/goarch and needs no
// shared library beyond the operating system's own: no ELF interpreter or
// DT_NEEDED, only system frameworks on macOS (Go always links libSystem
// there), only kernel32.dll on Windows (Go loads the rest at run time).
func checkStatic(t *testing.T, path, goos, goarch string) {
	t.Helper()
	switch goos {
	case "linux":
		f, err := elf.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		want := map[string]elf.Machine{"amd64": elf.EM_X86_64, "arm64": elf.EM_AARCH64}[goarch]
		if f.Machine != want {
			t.Errorf("%s: machine %v, want %v", path, f.Machine, want)
		}
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP || p.Type == elf.PT_DYNAMIC {
				t.Errorf("%s: has a %v program header: not static", path, p.Type)
			}
		}
		if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
			t.Errorf("%s: needs %v", path, libs)
		}
	case "darwin":
		f, err := macho.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		want := map[string]macho.Cpu{"amd64": macho.CpuAmd64, "arm64": macho.CpuArm64}[goarch]
		if f.Cpu != want {
			t.Errorf("%s: cpu %v, want %v", path, f.Cpu, want)
		}
		libs, err := f.ImportedLibraries()
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range libs {
			if !strings.HasPrefix(l, "/usr/lib/") && !strings.HasPrefix(l, "/System/Library/") {
				t.Errorf("%s: needs %s, which is not part of macOS", path, l)
			}
		}
	case "windows":
		f, err := pe.Open(path)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		want := map[string]uint16{"amd64": pe.IMAGE_FILE_MACHINE_AMD64, "arm64": pe.IMAGE_FILE_MACHINE_ARM64}[goarch]
		if f.Machine != want {
			t.Errorf("%s: machine %#x, want %#x", path, f.Machine, want)
		}
		libs, err := f.ImportedLibraries()
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range libs {
			if !strings.EqualFold(l, "kernel32.dll") {
				t.Errorf("%s: imports %s", path, l)
			}
		}
	}
}

// checkBuildInfo fails unless the binary was built reproducibly from the
// snapshot's commit: -trimpath, no cgo, an empty build ID, VCS stamped
// and clean. It returns the commit's time from the VCS stamp.
func checkBuildInfo(t *testing.T, path, commit string) (vcsTime string) {
	t.Helper()
	bi, err := buildinfo.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if bi.GoVersion != runtime.Version() {
		t.Errorf("%s: built with %s, want %s", path, bi.GoVersion, runtime.Version())
	}
	set := map[string]string{}
	for _, s := range bi.Settings {
		set[s.Key] = s.Value
	}
	for k, want := range map[string]string{"-trimpath": "true", "CGO_ENABLED": "0", "vcs": "git", "vcs.revision": commit, "vcs.modified": "false"} {
		if set[k] != want {
			t.Errorf("%s: build setting %s = %q, want %q", path, k, set[k], want)
		}
	}
	// -trimpath keeps -ldflags out of the build info; the build ID shows
	// -buildid= took effect.
	if id := runOut(t, exec.Command("go", "tool", "buildid", path)); strings.TrimSpace(id) != "" {
		t.Errorf("%s: build ID %q, want none (-buildid=)", path, id)
	}
	return set["vcs.time"]
}

// TestArchives unpacks every archive, checks what it holds and that its
// binary is static and built from the commit, and runs the linux/amd64
// binary's `version`.
func TestArchives(t *testing.T) {
	d := loadDist(t, "HOSTLINK_RELEASE_DIST")
	for _, tg := range targets {
		t.Run(tg.goos+"_"+tg.goarch, func(t *testing.T) {
			a := d.one(t, "Archive", tg.goos, tg.goarch)
			dir := unpack(t, d.path(a))
			exe := "hostlink"
			if tg.goos == "windows" {
				exe += ".exe"
			}
			var got []string
			filepath.WalkDir(dir, func(p string, e os.DirEntry, err error) error {
				if err == nil && !e.IsDir() {
					rel, _ := filepath.Rel(dir, p)
					got = append(got, filepath.ToSlash(rel))
				}
				return err
			})
			slices.Sort(got)
			want := []string{"LICENSE", "README.md", "completions/hostlink.bash", "completions/hostlink.fish", "completions/hostlink.ps1",
				"completions/hostlink.zsh", "manpages/hostlink.1.gz", exe}
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Errorf("%s holds %q, want %q", a.Name, got, want)
			}
			bin := filepath.Join(dir, exe)
			checkStatic(t, bin, tg.goos, tg.goarch)
			vcsTime := checkBuildInfo(t, bin, d.meta.Commit)
			if st, err := os.Stat(bin); err == nil && tg.goos != "windows" && st.Mode().Perm() != 0o755 {
				t.Errorf("%s: mode %v, want 0755", exe, st.Mode().Perm())
			}
			if tg.goos == "linux" && tg.goarch == runtime.GOARCH {
				checkVersion(t, exec.Command(bin, "version", "--json"), d, tg.goos+"/"+tg.goarch, vcsTime)
				checkGenerated(t, dir, bin)
			}
		})
	}
}

// checkVersion runs `hostlink version --json` and compares it with the
// snapshot: its version, its commit, the commit's time and the target.
func checkVersion(t *testing.T, cmd *exec.Cmd, d *dist, target, vcsTime string) {
	t.Helper()
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("%s: %v", strings.Join(cmd.Args, " "), err)
	}
	var info version.Info
	if err := json.Unmarshal(out, &info); err != nil {
		t.Fatalf("version --json printed %q: %v", out, err)
	}
	if info.Version != d.meta.Version || info.Commit != d.meta.Commit || info.Modified || info.Target != target || info.Go != runtime.Version() {
		t.Errorf("version --json = %+v, want version %s, commit %s, target %s, %s", info, d.meta.Version, d.meta.Commit, target, runtime.Version())
	}
	date, err1 := time.Parse(time.RFC3339, info.Date)
	commitTime, err2 := time.Parse(time.RFC3339, vcsTime)
	if err1 != nil || err2 != nil || !date.Equal(commitTime) {
		t.Errorf("version date %q, want the commit's time %q", info.Date, vcsTime)
	}
}

// TestWindowsBinaryUnderWine runs the windows/amd64 binary's `version`
// under Wine, prepared as .ci/release-check does (ci_wine_prepare).
func TestWindowsBinaryUnderWine(t *testing.T) {
	d := loadDist(t, "HOSTLINK_RELEASE_DIST")
	wine := tstest.Tool(t, "wine")
	tstest.Env(t, "WINEPREFIX", "the Wine prefix ci_wine_prepare in .ci/lib.sh makes")
	dir := unpack(t, d.path(d.one(t, "Archive", "windows", "amd64")))
	bin := filepath.Join(dir, "hostlink.exe")
	vcsTime := checkBuildInfo(t, bin, d.meta.Commit)
	cmd := exec.Command(wine, bin, "version", "--json")
	cmd.Env = append(os.Environ(), "HOSTLINK_UNDER_WINE=1")
	checkVersion(t, cmd, d, "windows/amd64", vcsTime)
}

// checkGenerated checks the completions and the man page in an unpacked
// archive against what its binary generates, and the man page with groff's
// warnings on.
func checkGenerated(t *testing.T, dir, bin string) {
	t.Helper()
	for file, args := range map[string][]string{
		"completions/hostlink.bash": {"completion", "bash"}, "completions/hostlink.zsh": {"completion", "zsh"},
		"completions/hostlink.fish": {"completion", "fish"}, "completions/hostlink.ps1": {"completion", "powershell"},
	} {
		got, _ := os.ReadFile(filepath.Join(dir, file))
		if want := runOut(t, exec.Command(bin, args...)); string(got) != want {
			t.Errorf("%s is not what hostlink %s prints", file, strings.Join(args, " "))
		}
	}
	f, err := os.Open(filepath.Join(dir, "manpages", "hostlink.1.gz"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	page, err := io.ReadAll(gz)
	if err != nil {
		t.Fatal(err)
	}
	if gz.Name != "" || !gz.ModTime.IsZero() {
		t.Errorf("hostlink.1.gz names %q, %v in its header: not reproducible", gz.Name, gz.ModTime)
	}
	if want := runOut(t, exec.Command(bin, "manpage")); string(page) != want {
		t.Errorf("hostlink.1.gz is not what hostlink manpage prints")
	}
	contains(t, "hostlink.1", string(page), ".SS hostlink update [flags]", ".SS hostlink audit verify", "\\fB\\-\\-allow\\-downgrade\\fR")
	groff := exec.Command(tstest.Tool(t, "groff"), "-man", "-ww", "-z")
	groff.Stdin = strings.NewReader(string(page))
	if out, err := groff.CombinedOutput(); err != nil || len(out) > 0 {
		t.Errorf("groff -man -ww hostlink.1: %v\n%s", err, out)
	}
}
