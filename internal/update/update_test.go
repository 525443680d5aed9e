package update

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
)

// testKey is an Ed25519 signer and its allowed-signers entry.
type testKey struct {
	signer  ssh.Signer
	signers []Signer
}

func newKey(t *testing.T) testKey {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	s, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	line := `release@hostlink namespaces="hostlink-release" ` + string(bytes.TrimSpace(ssh.MarshalAuthorizedKey(s.PublicKey())))
	signers, err := ParseAllowedSigners([]byte(line), "test key")
	if err != nil || len(signers) != 1 {
		t.Fatalf("ParseAllowedSigners(%q) = %v, %v", line, signers, err)
	}
	return testKey{s, signers}
}

func (k testKey) sign(t *testing.T, msg []byte, namespace string) []byte {
	t.Helper()
	sig, err := sshsig.Sign(bytes.NewReader(msg), k.signer, sshsig.HashSHA512, namespace)
	if err != nil {
		t.Fatal(err)
	}
	return sshsig.Armor(sig)
}

func TestParseAllowedSigners(t *testing.T) {
	k := newKey(t)
	key := string(bytes.TrimSpace(ssh.MarshalAuthorizedKey(k.signer.PublicKey())))
	for _, tt := range []struct {
		line string
		n    int
		err  bool
	}{
		{`release@hostlink namespaces="hostlink-release" ` + key, 1, false},
		{`release@hostlink ` + key + ` a comment`, 1, false},
		{`*@hostlink namespaces="file,hostlink-release" ` + key, 1, false},
		{`release@hostlink namespaces="file" ` + key, 0, false},
		{`someone@else namespaces="hostlink-release" ` + key, 0, false},
		{`release@hostlink cert-authority ` + key, 0, false},
		{`release@hostlink valid-before="20300101" ` + key, 0, true},
		{`release@hostlink namespaces="hostlink-release" ssh-ed25519 notbase64`, 0, true},
		{"# a comment\n\n", 0, false},
	} {
		got, err := ParseAllowedSigners([]byte(tt.line), "x")
		if len(got) != tt.n || (err != nil) != tt.err {
			t.Errorf("ParseAllowedSigners(%q) = %d keys, %v; want %d, error %v", tt.line, len(got), err, tt.n, tt.err)
		}
	}
}

// TestReleaseKeyParses checks the embedded key: one Ed25519 key.
func TestReleaseKeyParses(t *testing.T) {
	s := ReleaseSigners()
	if len(s) != 1 || s[0].Key.Type() != ssh.KeyAlgoED25519 || s[0].Source != "the hostlink release key" {
		t.Fatalf("ReleaseSigners() = %+v", s)
	}
}

// TestVerifyOpenSSHSignature checks that a signature ssh-keygen makes
// verifies here, and that what ssh-keygen refuses is refused.
func TestVerifyOpenSSHSignature(t *testing.T) {
	keygen, err := exec.LookPath("ssh-keygen")
	if err != nil {
		t.Skip("ssh-keygen not installed")
	}
	dir := t.TempDir()
	key := filepath.Join(dir, "key")
	if out, err := exec.Command(keygen, "-q", "-t", "ed25519", "-N", "", "-f", key).CombinedOutput(); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	msg := []byte("0000000000000000000000000000000000000000000000000000000000000000  hostlink_1.0.0_linux_amd64.tar.gz\n")
	os.WriteFile(filepath.Join(dir, "SHA256SUMS"), msg, 0o644)
	sign := func(ns string) []byte {
		os.Remove(filepath.Join(dir, "SHA256SUMS.sig"))
		if out, err := exec.Command(keygen, "-q", "-Y", "sign", "-n", ns, "-f", key, filepath.Join(dir, "SHA256SUMS")).CombinedOutput(); err != nil {
			t.Fatalf("%v\n%s", err, out)
		}
		b, _ := os.ReadFile(filepath.Join(dir, "SHA256SUMS.sig"))
		return b
	}
	pub, _ := os.ReadFile(key + ".pub")
	signers, err := ParseAllowedSigners([]byte("release@hostlink "+string(pub)), "file")
	if err != nil {
		t.Fatal(err)
	}
	sig := sign(Namespace)
	got, err := Verify(msg, sig, signers)
	if err != nil {
		t.Fatalf("Verify of ssh-keygen's signature: %v", err)
	}
	if got.Fingerprint() != signers[0].Fingerprint() {
		t.Errorf("Verify returned %s", got.Describe())
	}
	if _, err := Verify(append(msg, '\n'), sig, signers); err == nil {
		t.Error("a changed message verified")
	}
	if _, err := Verify(msg, sig, newKey(t).signers); err == nil || !strings.Contains(err.Error(), "another key") {
		t.Errorf("another key: %v", err)
	}
	if _, err := Verify(msg, sign("file"), signers); err == nil || !strings.Contains(err.Error(), `namespace "file"`) {
		t.Errorf("another namespace: %v", err)
	}
	if _, err := Verify(msg, []byte("not a signature"), signers); err == nil {
		t.Error("garbage verified")
	}
}

// release is a release directory served over loopback HTTP.
type release struct {
	dir string
	url string
}

// newRelease writes a release of version for this platform whose
// "binary" is a script answering `version --json` with claims (default:
// version and this target), signed by k in namespace ns.
func newRelease(t *testing.T, k testKey, version, claims, ns string) *release {
	t.Helper()
	if claims == "" {
		claims = fmt.Sprintf(`{"version":%q,"go":"go","target":"%s/%s"}`, version, runtime.GOOS, runtime.GOARCH)
	}
	dir := t.TempDir()
	var buf bytes.Buffer
	gz := gzip.NewWriter(&buf)
	tw := tar.NewWriter(gz)
	body := []byte("#!/bin/sh\necho '" + claims + "'\n")
	for _, f := range []string{"LICENSE", "hostlink"} {
		tw.WriteHeader(&tar.Header{Name: f, Mode: 0o755, Size: int64(len(body)), Typeflag: tar.TypeReg})
		tw.Write(body)
	}
	tw.Close()
	gz.Close()
	name := ArchiveName(version, runtime.GOOS, runtime.GOARCH)
	os.WriteFile(filepath.Join(dir, name), buf.Bytes(), 0o644)
	sum := sha256.Sum256(buf.Bytes())
	sums := []byte(hex.EncodeToString(sum[:]) + "  " + name + "\n" + strings.Repeat("0", 64) + "  install.sh\n")
	os.WriteFile(filepath.Join(dir, "SHA256SUMS"), sums, 0o644)
	os.WriteFile(filepath.Join(dir, "SHA256SUMS.sig"), k.sign(t, sums, ns), 0o644)
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	return &release{dir, srv.URL}
}

func TestFetch(t *testing.T) {
	k := newKey(t)
	r := newRelease(t, k, "1.2.3", "", Namespace)
	got, err := Fetch(context.Background(), Client(), r.url+"/", k.signers)
	if err != nil {
		t.Fatal(err)
	}
	if got.Version != "1.2.3" || got.URL != r.url || got.Signer.Fingerprint() != k.signers[0].Fingerprint() {
		t.Errorf("Fetch = %+v", got)
	}
	// The release key did not sign it.
	if _, err := Fetch(context.Background(), Client(), r.url, ReleaseSigners()); err == nil ||
		!strings.Contains(err.Error(), "does not verify with the hostlink release key") {
		t.Errorf("Fetch with the release key: %v", err)
	}
	// A changed SHA256SUMS.
	sums, _ := os.ReadFile(filepath.Join(r.dir, "SHA256SUMS"))
	os.WriteFile(filepath.Join(r.dir, "SHA256SUMS"), bytes.Replace(sums, []byte("1.2.3"), []byte("9.2.3"), 1), 0o644)
	if _, err := Fetch(context.Background(), Client(), r.url, k.signers); err == nil {
		t.Error("a changed SHA256SUMS verified")
	}
	// Another namespace.
	r2 := newRelease(t, k, "1.2.3", "", "file")
	if _, err := Fetch(context.Background(), Client(), r2.url, k.signers); err == nil || !strings.Contains(err.Error(), "namespace") {
		t.Errorf("another namespace: %v", err)
	}
	// Plain http elsewhere than loopback is refused before any request.
	if _, err := Fetch(context.Background(), Client(), "http://example.com/r", k.signers); err == nil || !strings.Contains(err.Error(), "loopback") {
		t.Errorf("http to a remote host: %v", err)
	}
	// A missing signature.
	os.Remove(filepath.Join(r2.dir, "SHA256SUMS.sig"))
	if _, err := Fetch(context.Background(), Client(), r2.url, k.signers); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("no signature: %v", err)
	}
}

func TestCompare(t *testing.T) {
	for _, tt := range []struct {
		a, b string
		c    int
		ok   bool
	}{
		{"1.2.3", "1.2.4", -1, true},
		{"1.10.0", "1.9.0", 1, true},
		{"v1.2.3", "1.2.3", 0, true},
		{"0.0.1-snapshot", "0.0.1", -1, true},
		{"0.0.2-snapshot", "0.0.1", 1, true},
		{"devel", "1.0.0", 0, false},
	} {
		c, ok := Compare(tt.a, tt.b)
		if c != tt.c || ok != tt.ok {
			t.Errorf("Compare(%q, %q) = %d, %v; want %d, %v", tt.a, tt.b, c, ok, tt.c, tt.ok)
		}
	}
}

func TestParseArchiveName(t *testing.T) {
	for name, want := range map[string][3]string{
		"hostlink_1.2.3_linux_amd64.tar.gz":         {"1.2.3", "linux", "amd64"},
		"hostlink_0.0.1-snapshot_windows_arm64.zip": {"0.0.1-snapshot", "windows", "arm64"},
	} {
		v, o, a, ok := parseArchiveName(name)
		if !ok || [3]string{v, o, a} != want {
			t.Errorf("parseArchiveName(%q) = %s %s %s %v", name, v, o, a, ok)
		}
	}
	for _, name := range []string{"hostlink_1.2.3_amd64.deb", "hostlink_1.2.3_linux_amd64.cdx.json", "install.sh", "hostlink-1.2.3-1.x86_64.rpm"} {
		if _, _, _, ok := parseArchiveName(name); ok {
			t.Errorf("parseArchiveName(%q) took it for an archive", name)
		}
	}
}

func TestManaged(t *testing.T) {
	read := func(content string) func(string) ([]byte, error) {
		return func(p string) ([]byte, error) {
			if p != InstalledBy || content == "" {
				return nil, os.ErrNotExist
			}
			return []byte(content), nil
		}
	}
	for _, tt := range []struct {
		exe, installedBy, want string
	}{
		{"/usr/bin/hostlink", "deb\n", "apt install --only-upgrade hostlink"},
		{"/usr/bin/hostlink", "rpm\n", "dnf upgrade hostlink"},
		{"/usr/bin/hostlink", "", "your distribution's package manager"},
		{"/opt/homebrew/Cellar/hostlink/1.2.3/bin/hostlink", "", "brew upgrade hostlink"},
		{"/home/linuxbrew/.linuxbrew/Cellar/hostlink/1.2.3/bin/hostlink", "", "brew upgrade hostlink"},
		{`C:\Users\ada\scoop\apps\hostlink\1.2.3\hostlink.exe`, "", "scoop update hostlink"},
		{`C:\Users\ada\AppData\Local\Microsoft\WinGet\Packages\hostlink.hostlink_Microsoft.Winget.Source_8wekyb3d8bbwe\hostlink.exe`, "", "winget upgrade hostlink.hostlink"},
		{"/home/ada/.local/bin/hostlink", "deb\n", ""},
		{"/usr/local/bin/hostlink", "deb\n", ""},
		{"/home/ada/go/bin/hostlink", "", ""},
	} {
		exe := tt.exe
		if strings.Contains(exe, `\`) && runtime.GOOS != "windows" {
			exe = strings.ReplaceAll(exe, `\`, "/")
		}
		m := Managed(exe, read(tt.installedBy))
		switch {
		case tt.want == "" && m != nil:
			t.Errorf("Managed(%q) = %+v, want none", tt.exe, m)
		case tt.want != "" && (m == nil || !strings.Contains(m.Command, tt.want)):
			t.Errorf("Managed(%q) = %+v, want %q", tt.exe, m, tt.want)
		}
	}
}

// TestInstall installs releases over a stand-in binary: a newer one
// replaces it, the same one changes nothing, an older one is refused
// unless allowed, and a tampered or lying one is refused with the old
// binary left as it was.
func TestInstall(t *testing.T) {
	if runtime.GOOS == "windows" {
		t.Skip("the stand-in binaries are shell scripts")
	}
	k := newKey(t)
	ctx := context.Background()
	dir := t.TempDir()
	exe := filepath.Join(dir, "hostlink")
	old := []byte("#!/bin/sh\necho old\n")
	os.WriteFile(exe, old, 0o755)
	opts := Options{Exe: exe, Current: "1.0.0", GOOS: runtime.GOOS, GOARCH: runtime.GOARCH}
	unchanged := func(what string) {
		t.Helper()
		if b, _ := os.ReadFile(exe); !bytes.Equal(b, old) {
			t.Errorf("%s: the binary changed to %q", what, b)
		}
		if es, _ := os.ReadDir(dir); len(es) != 1 {
			t.Errorf("%s: %d files beside the binary, want none", what, len(es)-1)
		}
	}
	fetch := func(r *release) *Release {
		t.Helper()
		rel, err := Fetch(ctx, Client(), r.url, k.signers)
		if err != nil {
			t.Fatal(err)
		}
		return rel
	}

	older := fetch(newRelease(t, k, "0.9.0", "", Namespace))
	if _, err := Install(ctx, older, opts); !errors.Is(err, ErrDowngrade) || !strings.Contains(err.Error(), "older than this hostlink 1.0.0") {
		t.Errorf("Install of an older release: %v", err)
	}
	unchanged("older")
	devel := opts
	devel.Current = "devel"
	if _, err := Install(ctx, older, devel); !errors.Is(err, ErrDowngrade) {
		t.Errorf("Install over a development build: %v", err)
	}
	same := fetch(newRelease(t, k, "1.0.0", "", Namespace))
	if res, err := Install(ctx, same, opts); err != nil || res.Changed {
		t.Errorf("Install of the same release: %+v, %v", res, err)
	}
	unchanged("same")

	lying := fetch(newRelease(t, k, "1.1.0", `{"version":"6.6.6","target":"linux/amd64"}`, Namespace))
	if _, err := Install(ctx, lying, opts); err == nil || !strings.Contains(err.Error(), "says it is 6.6.6") {
		t.Errorf("Install of a binary that is another version: %v", err)
	}
	unchanged("lying")

	tr := newRelease(t, k, "1.1.0", "", Namespace)
	tampered := fetch(tr)
	name := ArchiveName("1.1.0", runtime.GOOS, runtime.GOARCH)
	f, _ := os.OpenFile(filepath.Join(tr.dir, name), os.O_APPEND|os.O_WRONLY, 0)
	f.WriteString("x")
	f.Close()
	if _, err := Install(ctx, tampered, opts); err == nil || !strings.Contains(err.Error(), "checksum mismatch for "+name) {
		t.Errorf("Install of a tampered archive: %v", err)
	}
	unchanged("tampered")

	newer := fetch(newRelease(t, k, "1.1.0", "", Namespace))
	res, err := Install(ctx, newer, opts)
	if err != nil || !res.Changed || res.From != "1.0.0" || res.To != "1.1.0" || !strings.Contains(res.Signer, k.signers[0].Fingerprint()) {
		t.Fatalf("Install of a newer release: %+v, %v", res, err)
	}
	out, err := exec.Command(exe).Output()
	if err != nil || !strings.Contains(string(out), `"version":"1.1.0"`) {
		t.Errorf("the installed binary says %q, %v", out, err)
	}
	if es, _ := os.ReadDir(dir); len(es) != 1 {
		t.Errorf("%d files beside the binary after the update, want none", len(es)-1)
	}

	down := opts
	down.Current, down.AllowDowngrade = "1.1.0", true
	if res, err := Install(ctx, older, down); err != nil || !res.Changed {
		t.Errorf("Install of an older release with AllowDowngrade: %+v, %v", res, err)
	}
}
