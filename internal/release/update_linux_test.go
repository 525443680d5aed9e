package release

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/apitype"
	"github.com/hostlink/hostlink/internal/tstest"
)

// previous is the version of the release the update tests start from,
// older than any snapshot.
const previous = "0.0.0"

// buildPrevious builds hostlink from the snapshot's source (its clone)
// stamped as release previous, as the release before it would be.
func buildPrevious(t *testing.T, d *dist) string {
	t.Helper()
	out := filepath.Join(t.TempDir(), "hostlink")
	pkg := "github.com/hostlink/hostlink/internal/version"
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags",
		"-s -w -buildid= -X "+pkg+".Version="+previous+" -X "+pkg+".Commit="+d.meta.Commit, "-o", out, "./cmd/hostlink")
	cmd.Dir = filepath.Dir(d.dir)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH="+runtime.GOARCH)
	runOut(t, cmd)
	return out
}

// previousRelease makes the release of bin as version previous for this
// machine: its archive, SHA256SUMS and signature, signed with the key the
// snapshot is signed with.
func previousRelease(t *testing.T, bin string) string {
	t.Helper()
	key := tstest.Env(t, "HOSTLINK_RELEASE_KEY", "the SSH key .ci/release-check signs the snapshot with")
	dir := t.TempDir()
	body, err := os.ReadFile(bin)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	tw.WriteHeader(&tar.Header{Name: "hostlink", Mode: 0o755, Size: int64(len(body)), Typeflag: tar.TypeReg})
	tw.Write(body)
	tw.Close()
	gz.Close()
	name := "hostlink_" + previous + "_linux_" + runtime.GOARCH + ".tar.gz"
	os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644)
	sum := sha256.Sum256(buf.Bytes())
	os.WriteFile(filepath.Join(dir, "SHA256SUMS"), []byte(hex.EncodeToString(sum[:])+"  "+name+"\n"), 0o644)
	runOut(t, exec.Command("ssh-keygen", "-q", "-Y", "sign", "-n", "hostlink-release", "-f", key, filepath.Join(dir, "SHA256SUMS")))
	return dir
}

// serve serves dir on loopback HTTP.
func serve(t *testing.T, dir string) string {
	t.Helper()
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	return srv.URL
}

// TestUpdate updates the release before the snapshot to the snapshot with
// `hostlink update` against the snapshot on a loopback server: a tampered
// archive, a changed SHA256SUMS and the release key (which did not sign
// the snapshot) are refused first, leaving the binary as it was; the
// update check of a running daemon of the earlier release reports the
// snapshot in status and doctor; the update replaces the binary with the
// snapshot's, says which key verified it and that the running daemon must
// be restarted; a second run changes nothing; going back to the earlier
// release is refused unless --allow-downgrade.
func TestUpdate(t *testing.T) {
	d := loadDist(t, "HOSTLINK_RELEASE_DIST")
	signers := tstest.Env(t, "HOSTLINK_RELEASE_SIGNERS", "the allowed-signers file of the key .ci/release-check signs with")
	archive := "hostlink_" + d.meta.Version + "_linux_" + runtime.GOARCH + ".tar.gz"
	prev := buildPrevious(t, d)
	prevBytes, _ := os.ReadFile(prev)
	want, err := os.ReadFile(filepath.Join(unpack(t, filepath.Join(d.dir, archive)), "hostlink"))
	if err != nil {
		t.Fatal(err)
	}

	home := t.TempDir()
	exe := filepath.Join(home, "bin", "hostlink")
	os.MkdirAll(filepath.Dir(exe), 0o755)
	if err := os.WriteFile(exe, prevBytes, 0o755); err != nil {
		t.Fatal(err)
	}
	env := []string{"PATH=/usr/bin:/bin", "HOME=" + home, "HOSTLINK_HOME=" + filepath.Join(home, "hostlink")}
	hostlink := func(args ...string) (string, error) {
		cmd := exec.Command(exe, args...)
		cmd.Env = env
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	unchanged := func(what string) {
		t.Helper()
		if b, _ := os.ReadFile(exe); !bytes.Equal(b, prevBytes) {
			t.Errorf("%s: the binary changed", what)
		}
		if es, _ := os.ReadDir(filepath.Dir(exe)); len(es) != 1 {
			t.Errorf("%s: %d files beside the binary, want none", what, len(es)-1)
		}
	}

	snapshot := serve(t, d.dir)
	tamperedArchive := copyDist(t, d)
	f, _ := os.OpenFile(filepath.Join(tamperedArchive, archive), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("tampered")
	f.Close()
	forged, _ := forgeRelease(t, d)
	for _, tt := range []struct {
		name, url, want string
		args            []string
	}{
		{"tampered archive", serve(t, tamperedArchive), "checksum mismatch for " + archive, []string{"--allowed-signers", signers}},
		{"changed SHA256SUMS", serve(t, forged), "/SHA256SUMS does not verify with " + signers, []string{"--allowed-signers", signers}},
		{"release key", snapshot, "/SHA256SUMS does not verify with the hostlink release key", nil},
	} {
		out, err := hostlink(append([]string{"update", "--base-url", tt.url}, tt.args...)...)
		if err == nil || !strings.Contains(out, tt.want) {
			t.Errorf("%s: hostlink update: %v, want a failure saying %q:\n%s", tt.name, err, tt.want, out)
		}
		unchanged(tt.name)
	}

	out, err := hostlink("update", "--check", "--base-url", snapshot, "--allowed-signers", signers)
	if err != nil || !strings.Contains(out, "hostlink "+d.meta.Version+" is available (this is "+previous+"); to install it: hostlink update") {
		t.Errorf("hostlink update --check: %v\n%s", err, out)
	}
	unchanged("--check")

	// A daemon of the earlier release, with the update check on.
	cfg := "[update]\ncheck = true\nurl = \"" + snapshot + "\"\nallowed_signers = \"" + signers + "\"\n"
	os.MkdirAll(filepath.Join(home, "hostlink", "config"), 0o700)
	os.WriteFile(filepath.Join(home, "hostlink", "config", "config.toml"), []byte(cfg), 0o600)
	daemon := exec.Command(exe, "serve", "--listen", "127.0.0.1:0")
	daemon.Env = env
	if err := daemon.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- daemon.Wait() }()
	t.Cleanup(func() {
		daemon.Process.Signal(os.Interrupt)
		select {
		case <-exited:
		case <-time.After(30 * time.Second):
			daemon.Process.Kill()
			<-exited
		}
	})
	var st apitype.Status
	tstest.WaitFor(t, 60*time.Second, "the daemon's update check", func() bool {
		out, err := hostlink("status", "--json")
		return err == nil && json.Unmarshal([]byte(out), &st) == nil && st.Update != nil && st.Update.CheckedAt != nil
	})
	if u := st.Update; !u.Available || u.Latest != d.meta.Version || u.Current != previous || u.Error != "" {
		t.Errorf("status update = %+v", u)
	}
	out, _ = hostlink("status")
	contains(t, "hostlink status", out, "update: hostlink "+d.meta.Version+" is available (this is "+previous+"); to install it: hostlink update\n")
	out, _ = hostlink("doctor")
	contains(t, "hostlink doctor", out, "update check", "hostlink "+d.meta.Version+" is available (this is "+previous+")", "fix: hostlink update")

	out, err = hostlink("update", "--base-url", snapshot+"/", "--allowed-signers", signers)
	if err != nil {
		t.Fatalf("hostlink update: %v\n%s", err, out)
	}
	contains(t, "hostlink update", out,
		"Signature on "+snapshot+"/SHA256SUMS: good, by ED25519 key "+signerFingerprint(t)+" ("+signers+")",
		"Checksum of "+archive+": good", "Updated "+exe+" from "+previous+" to "+d.meta.Version,
		"The running daemon (pid "+strconv.Itoa(daemon.Process.Pid)+") is still hostlink "+previous+". Restart it to run "+d.meta.Version)
	if b, _ := os.ReadFile(exe); !bytes.Equal(b, want) {
		t.Errorf("after the update %s is not the snapshot's binary", exe)
	}
	if es, _ := os.ReadDir(filepath.Dir(exe)); len(es) != 1 {
		t.Errorf("%d files beside the binary after the update, want none", len(es)-1)
	}
	checkVersion(t, exec.Command(exe, "version", "--json"), d, "linux/"+runtime.GOARCH, checkBuildInfo(t, exe, d.meta.Commit))

	out, err = hostlink("update", "--base-url", snapshot, "--allowed-signers", signers)
	if err != nil || !strings.Contains(out, "hostlink "+d.meta.Version+" is up to date") {
		t.Errorf("hostlink update again: %v\n%s", err, out)
	}

	// Back to the earlier release: only when asked.
	older := serve(t, previousRelease(t, prev))
	out, err = hostlink("update", "--base-url", older, "--allowed-signers", signers)
	if err == nil || !strings.Contains(out, "is "+previous+", older than this hostlink "+d.meta.Version+"; pass --allow-downgrade") {
		t.Errorf("hostlink update to an older release: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(exe); !bytes.Equal(b, want) {
		t.Errorf("a refused downgrade changed %s", exe)
	}
	out, err = hostlink("update", "--base-url", older, "--allowed-signers", signers, "--allow-downgrade")
	if err != nil || !strings.Contains(out, "Updated "+exe+" from "+d.meta.Version+" to "+previous) {
		t.Errorf("hostlink update --allow-downgrade: %v\n%s", err, out)
	}
	if b, _ := os.ReadFile(exe); !bytes.Equal(b, prevBytes) {
		t.Errorf("after --allow-downgrade %s is not the earlier release", exe)
	}
}
