package release

import (
	"bufio"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/devplatform"
	"github.com/hostlink/hostlink/internal/devplatform/devplatformtest"
	"github.com/hostlink/hostlink/internal/tstest"
)

// nobody is the unprivileged account install.sh runs as when the test runs
// as root, to show that installing needs no root.
const nobody = 65534

// installer runs install.sh against a release served over loopback HTTP.
type installer struct {
	t      *testing.T
	dir    string // owned by the installing user: the script, the prefix, a fake-uname dir
	url    string
	env    []string
	asUser bool
}

// newInstaller serves dir (a copy of the snapshot, or the snapshot itself)
// on a loopback HTTP server.
func newInstaller(t *testing.T, serve string) *installer {
	t.Helper()
	srv := httptest.NewServer(http.FileServer(http.Dir(serve)))
	t.Cleanup(srv.Close)
	// Not t.TempDir: its parents are private to root, and nobody must
	// reach this one.
	dir, err := os.MkdirTemp("", "hostlink-install-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	os.Chmod(dir, 0o755)
	script, err := os.ReadFile(repoFile("install.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "install.sh"), script, 0o644); err != nil {
		t.Fatal(err)
	}
	// A copy the installing user can read.
	signers, err := os.ReadFile(tstest.Env(t, "HOSTLINK_RELEASE_SIGNERS", "the allowed-signers file of the key .ci/release-check signs with"))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "allowed_signers"), signers, 0o644); err != nil {
		t.Fatal(err)
	}
	in := &installer{t: t, dir: dir, url: srv.URL, asUser: os.Geteuid() == 0,
		env: []string{"PATH=/usr/local/bin:/usr/bin:/bin", "HOME=" + dir, "HOSTLINK_ALLOWED_SIGNERS=" + filepath.Join(dir, "allowed_signers")}}
	if in.asUser {
		if err := os.Chown(dir, nobody, nobody); err != nil {
			t.Fatal(err)
		}
	}
	return in
}

// fakeUname puts a uname first on PATH that reports this system and machine.
func (in *installer) fakeUname(system, machine string) {
	bin := filepath.Join(in.dir, "fakebin")
	os.Mkdir(bin, 0o755)
	script := "#!/bin/sh\ncase \"$1\" in -s) echo " + system + " ;; -m) echo " + machine + " ;; *) exec /bin/uname \"$@\" ;; esac\n"
	if err := os.WriteFile(filepath.Join(bin, "uname"), []byte(script), 0o755); err != nil {
		in.t.Fatal(err)
	}
	in.env[0] = "PATH=" + bin + ":/usr/local/bin:/usr/bin:/bin"
}

// command is install.sh with args (the base URL and prefix are added), as
// the installing user.
func (in *installer) command(prefix string, args ...string) *exec.Cmd {
	cmd := exec.Command("/bin/sh", append([]string{filepath.Join(in.dir, "install.sh"), "--base-url", in.url, "--prefix", prefix}, args...)...)
	cmd.Env = in.env
	cmd.Dir = in.dir
	cmd.SysProcAttr = &syscall.SysProcAttr{}
	if in.asUser {
		cmd.SysProcAttr.Credential = &syscall.Credential{Uid: nobody, Gid: nobody}
	}
	return cmd
}

// run runs install.sh with args (the base URL and prefix are added).
func (in *installer) run(prefix string, args ...string) (string, error) {
	in.t.Helper()
	out, err := in.command(prefix, args...).CombinedOutput()
	return string(out), err
}

// setEnv sets (or replaces) an environment variable of the installing
// user's environment.
func (in *installer) setEnv(name, value string) {
	for i, kv := range in.env {
		if strings.HasPrefix(kv, name+"=") {
			in.env[i] = name + "=" + value
			return
		}
	}
	in.env = append(in.env, name+"="+value)
}

// TestInstallScript installs the snapshot with install.sh as an
// unprivileged user, runs it again (nothing changes), and checks the next
// steps it prints.
func TestInstallScript(t *testing.T) {
	d := loadDist(t, "HOSTLINK_RELEASE_DIST")
	in := newInstaller(t, d.dir)
	prefix := filepath.Join(in.dir, "prefix")
	out, err := in.run(prefix)
	if err != nil {
		t.Fatalf("install.sh: %v\n%s", err, out)
	}
	bin := filepath.Join(prefix, "bin", "hostlink")
	contains(t, "install.sh output", out, "Signature on SHA256SUMS: good, by ED25519 key "+signerFingerprint(t)+
		" (the key in "+filepath.Join(in.dir, "allowed_signers")+" (--allowed-signers), not the hostlink release key)", "Checksum of hostlink_"+d.meta.Version+"_linux_"+runtime.GOARCH+".tar.gz: good",
		"Installed hostlink "+d.meta.Version+" (linux/"+runtime.GOARCH+") as "+bin,
		"  "+bin+" serve ", "  "+bin+" install ", "is not on your PATH")
	st, err := os.Stat(bin)
	if err != nil {
		t.Fatal(err)
	}
	if in.asUser && st.Sys().(*syscall.Stat_t).Uid != nobody {
		t.Errorf("%s is owned by uid %d, want the installing user", bin, st.Sys().(*syscall.Stat_t).Uid)
	}
	for _, c := range []string{"share/bash-completion/completions/hostlink", "share/zsh/site-functions/_hostlink", "share/fish/vendor_completions.d/hostlink.fish"} {
		if _, err := os.Stat(filepath.Join(prefix, c)); err != nil {
			t.Errorf("completion not installed: %v", err)
		}
	}
	checkVersion(t, exec.Command(bin, "version", "--json"), d, "linux/"+runtime.GOARCH, checkBuildInfo(t, bin, d.meta.Commit))

	// Again: the same release is already there, nothing is rewritten.
	before := st.ModTime()
	out, err = in.run(prefix)
	if err != nil {
		t.Fatalf("install.sh again: %v\n%s", err, out)
	}
	contains(t, "second install.sh output", out, "hostlink "+d.meta.Version+" (linux/"+runtime.GOARCH+") is already installed as "+bin)
	if st, _ := os.Stat(bin); !st.ModTime().Equal(before) {
		t.Errorf("the second run rewrote %s", bin)
	}

	// With the prefix on PATH, the next steps name plain hostlink.
	in.env[0] += ":" + filepath.Join(prefix, "bin")
	out, _ = in.run(prefix)
	contains(t, "install.sh output with the prefix on PATH", out, "  hostlink serve ", "  hostlink install ")
}

// TestInstallScriptPicksArch installs for the machine and system uname
// reports: each gets its own archive.
func TestInstallScriptPicksArch(t *testing.T) {
	d := loadDist(t, "HOSTLINK_RELEASE_DIST")
	for _, tt := range []struct{ system, machine, goos, goarch string }{
		{"Linux", "aarch64", "linux", "arm64"},
		{"Linux", "x86_64", "linux", "amd64"},
		{"Darwin", "arm64", "darwin", "arm64"},
		{"Darwin", "x86_64", "darwin", "amd64"},
	} {
		t.Run(tt.goos+"_"+tt.goarch, func(t *testing.T) {
			in := newInstaller(t, d.dir)
			in.fakeUname(tt.system, tt.machine)
			prefix := filepath.Join(in.dir, "prefix")
			out, err := in.run(prefix)
			if err != nil {
				t.Fatalf("install.sh: %v\n%s", err, out)
			}
			contains(t, "install.sh output", out, "hostlink_"+d.meta.Version+"_"+tt.goos+"_"+tt.goarch+".tar.gz")
			checkStatic(t, filepath.Join(prefix, "bin", "hostlink"), tt.goos, tt.goarch)
		})
	}
	in := newInstaller(t, d.dir)
	in.fakeUname("Linux", "riscv64")
	if out, err := in.run(filepath.Join(in.dir, "prefix")); err == nil || !strings.Contains(out, "no hostlink release for the riscv64 architecture") {
		t.Errorf("install.sh on riscv64: %v\n%s", err, out)
	}
}

// copyDist copies the snapshot's top-level files (what install.sh
// downloads) into a new directory, for tampering with.
func copyDist(t *testing.T, d *dist) string {
	t.Helper()
	dir := t.TempDir()
	entries, err := os.ReadDir(d.dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range entries {
		if e.Type().IsRegular() {
			b, err := os.ReadFile(filepath.Join(d.dir, e.Name()))
			if err != nil {
				t.Fatal(err)
			}
			os.WriteFile(filepath.Join(dir, e.Name()), b, 0o644)
		}
	}
	return dir
}

// TestInstallScriptRefusesTampering serves an archive that does not match
// SHA256SUMS, and a SHA256SUMS that does not match its signature: both are
// refused with a message saying why, and nothing is installed.
func TestInstallScriptRefusesTampering(t *testing.T) {
	d := loadDist(t, "HOSTLINK_RELEASE_DIST")
	archive := "hostlink_" + d.meta.Version + "_linux_" + runtime.GOARCH + ".tar.gz"

	badArchive := copyDist(t, d)
	f, err := os.OpenFile(filepath.Join(badArchive, archive), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		t.Fatal(err)
	}
	f.WriteString("tampered")
	f.Close()

	badSums := copyDist(t, d)
	sums, _ := os.ReadFile(filepath.Join(badSums, "SHA256SUMS"))
	os.WriteFile(filepath.Join(badSums, "SHA256SUMS"), append(sums, '\n'), 0o644)

	for _, tt := range []struct {
		name, dir, want string
		args            []string
	}{
		{"bad checksum", badArchive, "checksum mismatch for " + archive, nil},
		{"bad checksum, signature not checked", badArchive, "checksum mismatch for " + archive, []string{"--insecure-skip-signature"}},
		{"bad signature", badSums, "the signature on SHA256SUMS does not verify", nil},
	} {
		t.Run(tt.name, func(t *testing.T) {
			in := newInstaller(t, tt.dir)
			prefix := filepath.Join(in.dir, "prefix")
			out, err := in.run(prefix, tt.args...)
			if err == nil || !strings.Contains(out, tt.want) || !strings.Contains(out, "not installing") {
				t.Errorf("install.sh: %v, want a failure saying %q:\n%s", err, tt.want, out)
			}
			if _, err := os.Stat(filepath.Join(prefix, "bin", "hostlink")); err == nil {
				t.Errorf("install.sh installed hostlink from a tampered release")
			}
		})
	}
}

// TestInstalledServeWithoutGo installs with install.sh and runs the
// installed `hostlink serve` with a PATH that has no Go toolchain: it
// answers on loopback, its HELLO to a platform names the release version,
// and `hostlink status` reaches it.
func TestInstalledServeWithoutGo(t *testing.T) {
	d := loadDist(t, "HOSTLINK_RELEASE_DIST")
	in := newInstaller(t, d.dir)
	prefix := filepath.Join(in.dir, "prefix")
	if out, err := in.run(prefix); err != nil {
		t.Fatalf("install.sh: %v\n%s", err, out)
	}
	path := filepath.Join(prefix, "bin") + ":/usr/bin:/bin"
	for _, dir := range filepath.SplitList(path) {
		if _, err := os.Stat(filepath.Join(dir, "go")); err == nil {
			t.Fatalf("%s/go exists: the PATH must have no Go toolchain", dir)
		}
	}
	// A reference platform on loopback, to see the HELLO the release sends.
	tok := devplatform.NewToken()
	platform := devplatform.New(tok, devplatform.Config{})
	platURL := devplatformtest.Serve(t, platform)

	home := t.TempDir()
	env := []string{"PATH=" + path, "HOME=" + home, "HOSTLINK_HOME=" + filepath.Join(home, "hostlink"), "HOSTLINK_PLATFORM_TOKEN=" + tok}
	since := time.Now()
	cmd := exec.Command(filepath.Join(prefix, "bin", "hostlink"), "serve", "--listen", "127.0.0.1:0",
		"--platform", platURL)
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	t.Cleanup(func() {
		cmd.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			cmd.Process.Kill()
			<-exited
		}
	})
	urls := make(chan string, 1)
	go func() {
		re := regexp.MustCompile(`http://127\.0\.0\.1:\d+/mcp`)
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			if u := re.FindString(sc.Text()); u != "" {
				select {
				case urls <- u:
				default:
				}
			}
		}
		exited <- cmd.Wait()
	}()
	var url string
	select {
	case url = <-urls:
	case err := <-exited:
		t.Fatalf("hostlink serve exited: %v", err)
	case <-time.After(60 * time.Second):
		t.Fatal("hostlink serve did not report its address")
	}
	// Without the bearer token the endpoint refuses, which shows it is up.
	resp, err := http.Post(url, "application/json", strings.NewReader(`{}`))
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusUnauthorized {
		t.Errorf("POST %s without a token: %s, want 401", url, resp.Status)
	}
	// HELLO's shim_version is the release version.
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	peer, err := platform.WaitPeer(ctx, devplatform.ControlPeer, since)
	if err != nil {
		t.Fatalf("the installed hostlink did not reach the platform: %v", err)
	}
	if peer.Hello.ShimVersion != d.meta.Version {
		t.Errorf("HELLO shim_version %q, want the release version %q", peer.Hello.ShimVersion, d.meta.Version)
	}
	status := exec.Command(filepath.Join(prefix, "bin", "hostlink"), "status")
	status.Env = env
	contains(t, "hostlink status", runOut(t, status), "hostlink "+d.meta.Version+" running", "build: "+d.meta.Version+" (commit "+d.meta.Commit[:12])
}
