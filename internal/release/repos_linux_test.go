package release

import (
	"compress/gzip"
	"encoding/xml"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/tstest"
)

// repos is the snapshot's repositories (packaging/repos.sh), as
// .ci/release-check made them with a throw-away OpenPGP key.
func repos(t *testing.T) string {
	t.Helper()
	return tstest.Env(t, "HOSTLINK_RELEASE_REPOS", "the apt and rpm repositories .ci/release-check makes with packaging/repos.sh")
}

// debianRoot unpacks the minimal Debian root .ci/release-check made with
// debootstrap into a new directory, with /proc mounted in it (removed
// when the test ends), and with no package source but the ones the test
// adds.
func debianRoot(t *testing.T) string {
	t.Helper()
	tstest.Root(t)
	tarball := tstest.Env(t, "HOSTLINK_DEBIAN_ROOT", "a tarball of a debootstrap --variant=minbase root; .ci/release-check makes it")
	root := t.TempDir()
	runOut(t, exec.Command("tar", "-C", root, "-xzf", tarball))
	os.Remove(filepath.Join(root, "etc/apt/sources.list"))
	os.RemoveAll(filepath.Join(root, "etc/apt/sources.list.d"))
	os.MkdirAll(filepath.Join(root, "etc/apt/sources.list.d"), 0o755)
	runOut(t, exec.Command("mount", "-t", "proc", "proc", filepath.Join(root, "proc")))
	t.Cleanup(func() { exec.Command("umount", "-l", filepath.Join(root, "proc")).Run() })
	return root
}

// inRoot runs a command chrooted in root.
func inRoot(root string, args ...string) *exec.Cmd {
	cmd := exec.Command("chroot", append([]string{root}, args...)...)
	cmd.Env = []string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "DEBIAN_FRONTEND=noninteractive", "LC_ALL=C", "HOME=/root"}
	return cmd
}

// copyTree copies src to dst with cp -a.
func copyTree(t *testing.T, src, dst string) {
	t.Helper()
	os.MkdirAll(filepath.Dir(dst), 0o755)
	runOut(t, exec.Command("cp", "-a", src, dst))
}

// TestAptRepository installs hostlink with apt in a fresh Debian root from
// the snapshot's apt repository, as its hostlink.sources and keyring say:
// with another key (the real repository key, which did not sign the
// snapshot) apt refuses the repository; with the repository's key it
// installs, the binary runs and `hostlink update` refuses, naming apt; a
// purge leaves nothing behind.
func TestAptRepository(t *testing.T) {
	d := loadDist(t, "HOSTLINK_RELEASE_DIST")
	repo := repos(t)
	root := debianRoot(t)
	// The repository at the same path inside the root: the .sources file
	// names it as file://<repo>/apt.
	copyTree(t, repo, filepath.Join(root, repo))
	sources, err := os.ReadFile(filepath.Join(repo, "apt", "hostlink.sources"))
	if err != nil {
		t.Fatal(err)
	}
	contains(t, "hostlink.sources", string(sources), "URIs: file://"+repo+"/apt\n", "Suites: stable\n", "Components: main\n",
		"Signed-By: /usr/share/keyrings/hostlink-archive-keyring.asc\n")
	os.WriteFile(filepath.Join(root, "etc/apt/sources.list.d/hostlink.sources"), sources, 0o644)
	keyring := filepath.Join(root, "usr/share/keyrings/hostlink-archive-keyring.asc")

	real, _ := os.ReadFile(repoFile("packaging/keys/hostlink-archive-keyring.asc"))
	os.WriteFile(keyring, real, 0o644)
	out, err := inRoot(root, "apt-get", "update").CombinedOutput()
	if err == nil && !strings.Contains(string(out), "is not signed") {
		t.Errorf("apt-get update accepted the repository with another key:\n%s", out)
	}
	contains(t, "apt-get update with another key", string(out), "NO_PUBKEY")

	testKey, _ := os.ReadFile(filepath.Join(repo, "hostlink-archive-keyring.asc"))
	os.WriteFile(keyring, testKey, 0o644)
	out, err = inRoot(root, "apt-get", "update").CombinedOutput()
	if err != nil || strings.Contains(string(out), "W: ") {
		t.Fatalf("apt-get update: %v\n%s", err, out)
	}
	runOut(t, inRoot(root, "apt-get", "install", "-y", "--no-install-recommends", "hostlink"))
	policy := runOut(t, inRoot(root, "apt-cache", "policy", "hostlink"))
	contains(t, "apt-cache policy hostlink", policy, "Installed: "+pkgVersion(d), "file:"+repo+"/apt stable/main")

	cmd := inRoot(root, "/usr/bin/hostlink", "version", "--json")
	checkVersion(t, cmd, d, "linux/"+runtime.GOARCH, checkBuildInfo(t, filepath.Join(root, "usr/bin/hostlink"), d.meta.Commit))
	out, err = inRoot(root, "/usr/bin/hostlink", "update").CombinedOutput()
	if err == nil {
		t.Errorf("hostlink update from the .deb ran:\n%s", out)
	}
	contains(t, "hostlink update from the .deb", string(out), "/usr/bin/hostlink was installed by the hostlink .deb package (apt)",
		"sudo apt update && sudo apt install --only-upgrade hostlink")
	if _, err := os.Stat(filepath.Join(root, "usr/share/man/man1/hostlink.1.gz")); err != nil {
		t.Errorf("no man page: %v", err)
	}

	files := strings.Fields(runOut(t, inRoot(root, "dpkg-query", "-L", "hostlink")))
	runOut(t, inRoot(root, "apt-get", "purge", "-y", "hostlink"))
	for _, f := range files {
		if !strings.Contains(f, "hostlink") {
			continue // shared directories such as /usr/share/man
		}
		if _, err := os.Lstat(filepath.Join(root, f)); err == nil {
			t.Errorf("%s is still there after apt-get purge hostlink", f)
		}
	}
}

// repomd and primary are the parts of createrepo_c's metadata the test reads.
type repomd struct {
	Data []struct {
		Type     string `xml:"type,attr"`
		Location struct {
			Href string `xml:"href,attr"`
		} `xml:"location"`
	} `xml:"data"`
}

type primary struct {
	Packages []struct {
		Name     string `xml:"name"`
		Arch     string `xml:"arch"`
		Checksum struct {
			Type  string `xml:"type,attr"`
			Value string `xml:",chardata"`
		} `xml:"checksum"`
		Location struct {
			Href string `xml:"href,attr"`
		} `xml:"location"`
	} `xml:"package"`
}

// TestRPMRepository reads the snapshot's rpm repository as dnf would, by
// hand: repomd.xml's signature verifies with the repository key, it leads
// to the package and its checksum; the package's own signature verifies
// once the key is imported (and not before); rpm --root installs it into
// an empty root, where `hostlink update` refuses, naming dnf; rpm -e
// removes it.
func TestRPMRepository(t *testing.T) {
	d := loadDist(t, "HOSTLINK_RELEASE_DIST")
	tstest.Root(t)
	rpm := tstest.Tool(t, "rpm")
	repo := filepath.Join(repos(t), "rpm")
	key := filepath.Join(repos(t), "hostlink-archive-keyring.asc")

	conf, err := os.ReadFile(filepath.Join(repo, "hostlink.repo"))
	if err != nil {
		t.Fatal(err)
	}
	contains(t, "hostlink.repo", string(conf), "[hostlink]\n", "baseurl=file://"+repo+"\n", "gpgcheck=1\n", "repo_gpgcheck=1\n",
		"gpgkey=file://"+filepath.Dir(repo)+"/hostlink-archive-keyring.asc\n")

	// repomd.xml's signature, with gpgv and the key alone.
	dir := t.TempDir()
	keyring := filepath.Join(dir, "keyring.gpg")
	runOut(t, exec.Command("gpg", "--batch", "--yes", "--dearmor", "-o", keyring, key))
	runOut(t, exec.Command("gpgv", "--keyring", keyring, filepath.Join(repo, "repodata/repomd.xml.asc"), filepath.Join(repo, "repodata/repomd.xml")))
	other := filepath.Join(dir, "other.gpg")
	runOut(t, exec.Command("gpg", "--batch", "--yes", "--dearmor", "-o", other, repoFile("packaging/keys/hostlink-archive-keyring.asc")))
	if out, err := exec.Command("gpgv", "--keyring", other, filepath.Join(repo, "repodata/repomd.xml.asc"), filepath.Join(repo, "repodata/repomd.xml")).CombinedOutput(); err == nil {
		t.Errorf("repomd.xml verified with another key:\n%s", out)
	}

	var md repomd
	b, _ := os.ReadFile(filepath.Join(repo, "repodata/repomd.xml"))
	if err := xml.Unmarshal(b, &md); err != nil {
		t.Fatal(err)
	}
	var primaryHref string
	for _, x := range md.Data {
		if x.Type == "primary" {
			primaryHref = x.Location.Href
		}
	}
	f, err := os.Open(filepath.Join(repo, primaryHref))
	if err != nil {
		t.Fatalf("repomd.xml's primary %q: %v", primaryHref, err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	pb, _ := io.ReadAll(gz)
	var p primary
	if err := xml.Unmarshal(pb, &p); err != nil {
		t.Fatal(err)
	}
	pkg := ""
	for _, x := range p.Packages {
		if x.Name == "hostlink" && x.Arch == rpmArch[runtime.GOARCH] {
			pkg = filepath.Join(repo, x.Location.Href)
			if x.Checksum.Type != "sha256" || fileSHA256(t, pkg) != x.Checksum.Value {
				t.Errorf("%s: primary.xml says %s %s, the file is %s", x.Location.Href, x.Checksum.Type, x.Checksum.Value, fileSHA256(t, pkg))
			}
		}
	}
	if pkg == "" {
		t.Fatalf("primary.xml lists no hostlink for %s:\n%s", rpmArch[runtime.GOARCH], pb)
	}

	root := t.TempDir()
	runOut(t, exec.Command(rpm, "--root", root, "--initdb"))
	if out, err := exec.Command(rpm, "--root", root, "-K", pkg).CombinedOutput(); err == nil || !strings.Contains(string(out), "SIGNATURES NOT OK") {
		t.Errorf("rpm -K without the key: %v, %s", err, out)
	}
	runOut(t, exec.Command(rpm, "--root", root, "--import", key))
	if out := runOut(t, exec.Command(rpm, "--root", root, "-K", pkg)); !strings.Contains(out, "digests signatures OK") {
		t.Errorf("rpm -K with the key: %s", out)
	}
	runOut(t, exec.Command(rpm, "--root", root, "-i", pkg))
	if out := runOut(t, exec.Command(rpm, "--root", root, "-q", "hostlink")); !strings.HasPrefix(out, "hostlink-"+pkgVersion(d)+".") {
		t.Errorf("rpm -q hostlink: %s", out)
	}
	bin := filepath.Join(root, "usr/bin/hostlink")
	checkVersion(t, exec.Command(bin, "version", "--json"), d, "linux/"+runtime.GOARCH, checkBuildInfo(t, bin, d.meta.Commit))
	os.MkdirAll(filepath.Join(root, "proc"), 0o555)
	runOut(t, exec.Command("mount", "-t", "proc", "proc", filepath.Join(root, "proc")))
	out, err := exec.Command("chroot", root, "/usr/bin/hostlink", "update").CombinedOutput()
	exec.Command("umount", "-l", filepath.Join(root, "proc")).Run()
	if err == nil {
		t.Errorf("hostlink update from the .rpm ran:\n%s", out)
	}
	contains(t, "hostlink update from the .rpm", string(out), "/usr/bin/hostlink was installed by the hostlink .rpm package (dnf, zypper)",
		"sudo dnf upgrade hostlink")
	files := strings.Fields(runOut(t, exec.Command(rpm, "--root", root, "-ql", "hostlink")))
	runOut(t, exec.Command(rpm, "--root", root, "-e", "hostlink"))
	for _, f := range files {
		if _, err := os.Lstat(filepath.Join(root, f)); err == nil && strings.Contains(f, "hostlink") {
			t.Errorf("%s is still there after rpm -e hostlink", f)
		}
	}
}
