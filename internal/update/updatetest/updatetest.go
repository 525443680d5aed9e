// Package updatetest serves signed releases over loopback HTTP, for tests
// of what reads them (the update check in the daemon and doctor).
package updatetest

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"

	"github.com/hiddeco/sshsig"
	"golang.org/x/crypto/ssh"
)

// Release serves the SHA256SUMS of a release of version (one archive, for
// linux/amd64, with made-up content), signed by a new key in the
// "hostlink-release" namespace. It returns the release's URL and an
// allowed-signers file holding the key.
func Release(t testing.TB, version string) (url, signers string) {
	t.Helper()
	_, priv, err := ed25519.GenerateKey(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	signer, err := ssh.NewSignerFromKey(priv)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	archive := []byte("not a real archive")
	sum := sha256.Sum256(archive)
	name := "hostlink_" + version + "_linux_amd64.tar.gz"
	sums := []byte(hex.EncodeToString(sum[:]) + "  " + name + "\n")
	sig, err := sshsig.Sign(bytes.NewReader(sums), signer, sshsig.HashSHA512, "hostlink-release")
	if err != nil {
		t.Fatal(err)
	}
	for f, b := range map[string][]byte{name: archive, "SHA256SUMS": sums, "SHA256SUMS.sig": sshsig.Armor(sig)} {
		if err := os.WriteFile(filepath.Join(dir, f), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	signers = filepath.Join(t.TempDir(), "allowed_signers")
	line := `release@hostlink namespaces="hostlink-release" ` + string(ssh.MarshalAuthorizedKey(signer.PublicKey()))
	if err := os.WriteFile(signers, []byte(line), 0o644); err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(http.FileServer(http.Dir(dir)))
	t.Cleanup(srv.Close)
	return srv.URL, signers
}
