package release

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/autostart"
	"github.com/hostlink/hostlink/internal/tstest"
)

// packaged are the files every .deb and .rpm installs.
var packaged = []string{
	"/usr/bin/hostlink",
	"/usr/lib/systemd/user/hostlink.service",
	"/usr/share/bash-completion/completions/hostlink",
	"/usr/share/fish/vendor_completions.d/hostlink.fish",
	"/usr/share/doc/hostlink/README.md",
	"/usr/share/man/man1/hostlink.1.gz",
	"/usr/share/hostlink/installed-by",
}

// perFormat are the files whose place differs between Debian and RPM
// systems.
var perFormat = map[string][]string{
	"deb": {"/usr/share/zsh/vendor-completions/_hostlink", "/usr/share/doc/hostlink/copyright", "/usr/share/doc/hostlink/changelog.Debian.gz"},
	"rpm": {"/usr/share/zsh/site-functions/_hostlink", "/usr/share/licenses/hostlink/LICENSE"},
}

func (d *dist) pkg(t *testing.T, format, goarch string) string {
	t.Helper()
	for _, a := range d.ofType("Linux Package") {
		if a.Goarch == goarch && strings.HasSuffix(a.Name, "."+format) {
			return d.path(a)
		}
	}
	t.Fatalf("no .%s for linux/%s", format, goarch)
	return ""
}

// pkgVersion is the packages' version of the snapshot: a pre-release's
// "-" is "~", and -1 is the packaging revision.
func pkgVersion(d *dist) string {
	return strings.Replace(d.meta.Version, "-", "~", 1) + "-1"
}

// debArch and rpmArch are the packages' names for Go's architectures.
var (
	debArch = map[string]string{"amd64": "amd64", "arm64": "arm64"}
	rpmArch = map[string]string{"amd64": "x86_64", "arm64": "aarch64"}
)

// TestDebMetadata checks both .debs' control fields and file lists.
func TestDebMetadata(t *testing.T) {
	d := loadDist(t, "HOSTLINK_RELEASE_DIST")
	dpkgDeb := tstest.Tool(t, "dpkg-deb")
	for _, arch := range []string{"amd64", "arm64"} {
		deb := d.pkg(t, "deb", arch)
		info := runOut(t, exec.Command(dpkgDeb, "--field", deb, "Package", "Version", "Architecture", "Maintainer", "Homepage", "Section"))
		contains(t, filepath.Base(deb), info, "Package: hostlink\n", "Architecture: "+debArch[arch]+"\n",
			"Homepage: https://github.com/hostlink/hostlink\n", "Maintainer: The hostlink Authors")
		list := runOut(t, exec.Command(dpkgDeb, "--contents", deb))
		for _, f := range append(slices.Clone(packaged), perFormat["deb"]...) {
			contains(t, filepath.Base(deb)+" contents", list, "."+f+"\n")
		}
		// The copyright file is the license (Debian has no License field).
		x := t.TempDir()
		runOut(t, exec.Command(dpkgDeb, "-x", deb, x))
		copyright, err := os.ReadFile(filepath.Join(x, "usr/share/doc/hostlink/copyright"))
		if err != nil {
			t.Fatal(err)
		}
		lic, _ := os.ReadFile(repoFile("LICENSE"))
		if !bytes.Equal(copyright, lic) || !bytes.Contains(lic, []byte("BSD 3-Clause License")) {
			t.Errorf("%s: the copyright file is not the BSD-3-Clause LICENSE:\n%s", filepath.Base(deb), copyright)
		}
	}
}

// TestRPMMetadata checks both .rpms with rpm -qip and -qlp.
func TestRPMMetadata(t *testing.T) {
	d := loadDist(t, "HOSTLINK_RELEASE_DIST")
	rpm := tstest.Tool(t, "rpm")
	for _, arch := range []string{"amd64", "arm64"} {
		p := d.pkg(t, "rpm", arch)
		info := runOut(t, exec.Command(rpm, "-qip", p))
		contains(t, filepath.Base(p), info, "Name        : hostlink\n", "License     : BSD-3-Clause\n",
			"Architecture: "+rpmArch[arch]+"\n", "URL         : https://github.com/hostlink/hostlink\n",
			"Summary     : A local PC executor for AI agents\n", "Build Host  : hostlink-release\n")
		list := runOut(t, exec.Command(rpm, "-qlp", p))
		for _, f := range append(slices.Clone(packaged), perFormat["rpm"]...) {
			contains(t, filepath.Base(p)+" file list", list, f+"\n")
		}
	}
}

// TestDebInstall installs this machine's .deb with dpkg -i, runs hostlink
// from PATH, verifies the packaged systemd user unit, and removes the
// package, checking that nothing it installed is left.
func TestDebInstall(t *testing.T) {
	d := loadDist(t, "HOSTLINK_RELEASE_DIST")
	tstest.Root(t)
	dpkg := tstest.Tool(t, "dpkg")
	sa := tstest.Tool(t, "systemd-analyze")
	if out, err := exec.Command("dpkg-query", "-W", "-f=${Status}", "hostlink").Output(); err == nil && strings.Contains(string(out), "installed") {
		t.Fatalf("the hostlink package is already installed here (%s); remove it first: dpkg -r hostlink", out)
	}
	if _, err := os.Lstat(autostart.PackagedExe); err == nil {
		t.Fatalf("%s exists already; the test would overwrite it", autostart.PackagedExe)
	}
	deb := d.pkg(t, "deb", runtime.GOARCH)
	runOut(t, exec.Command(dpkg, "-i", deb))
	removed := false
	t.Cleanup(func() {
		if !removed {
			exec.Command(dpkg, "-r", "hostlink").Run()
		}
	})

	var files []string
	for _, f := range strings.Split(runOut(t, exec.Command("dpkg", "-L", "hostlink")), "\n") {
		if st, err := os.Lstat(f); err == nil && !st.IsDir() {
			files = append(files, f)
		}
	}
	for _, f := range append(slices.Clone(packaged), perFormat["deb"]...) {
		if !slices.Contains(files, f) {
			t.Errorf("dpkg -L hostlink does not list %s: %q", f, files)
		}
	}

	// hostlink from PATH, as a user's shell finds it.
	cmd := exec.Command("hostlink", "version", "--json")
	cmd.Env = append(os.Environ(), "PATH=/usr/local/bin:/usr/bin:/bin")
	if p, err := exec.LookPath("hostlink"); err != nil || p != autostart.PackagedExe {
		t.Errorf("hostlink on PATH is %q (%v), want %s", p, err, autostart.PackagedExe)
	}
	checkVersion(t, cmd, d, "linux/"+runtime.GOARCH, checkBuildInfo(t, autostart.PackagedExe, d.meta.Commit))

	// The unit is the one hostlink install would write for /usr/bin/hostlink,
	// and systemd accepts it.
	unit := "/usr/lib/systemd/user/" + autostart.SystemdUnit
	got, err := os.ReadFile(unit)
	if err != nil {
		t.Fatal(err)
	}
	want, err := autostart.PackagedSystemdUnit()
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, want) {
		t.Errorf("%s differs from autostart.PackagedSystemdUnit:\n%s\n---\n%s", unit, got, want)
	}
	home := t.TempDir()
	os.Mkdir(filepath.Join(home, "run"), 0o700)
	verify := exec.Command(sa, "--user", "verify", unit)
	verify.Env = append(os.Environ(), "HOME="+home, "XDG_RUNTIME_DIR="+filepath.Join(home, "run"), "SYSTEMD_LOG_COLOR=0")
	if out, err := verify.CombinedOutput(); err != nil || strings.TrimSpace(string(out)) != "" {
		t.Errorf("systemd-analyze --user verify %s: %v\n%s", unit, err, out)
	}

	runOut(t, exec.Command(dpkg, "-r", "hostlink"))
	removed = true
	for _, f := range files {
		if _, err := os.Lstat(f); err == nil {
			t.Errorf("%s is still there after dpkg -r hostlink", f)
		}
	}
	for _, dir := range []string{"/usr/share/doc/hostlink", "/usr/share/hostlink"} {
		if _, err := os.Lstat(dir); err == nil {
			t.Errorf("%s is still there after dpkg -r hostlink", dir)
		}
	}
}
