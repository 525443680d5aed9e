package release

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/hostlink/hostlink/internal/tstest"
)

// TestChecksums checks that SHA256SUMS lists every archive, package and
// SBOM, and that each listed file has the listed digest.
func TestChecksums(t *testing.T) {
	d := loadDist(t, "HOSTLINK_RELEASE_DIST")
	for _, typ := range []string{"Archive", "Linux Package", "SBOM"} {
		for _, a := range d.ofType(typ) {
			if _, ok := d.sums[a.Name]; !ok {
				t.Errorf("SHA256SUMS does not list the %s %s", typ, a.Name)
			}
		}
	}
	for name, sum := range d.sums {
		if got := fileSHA256(t, d.file(name)); got != sum {
			t.Errorf("%s: sha256 %s, SHA256SUMS says %s", name, got, sum)
		}
	}
	if n := len(d.ofType("SBOM")); n != len(targets) {
		t.Errorf("%d SBOMs, want one per archive (%d)", n, len(targets))
	}
	// install.sh is signed with the rest: the repository's, as committed.
	script, err := os.ReadFile(repoFile("install.sh"))
	if err != nil {
		t.Fatal(err)
	}
	sum := sha256.Sum256(script)
	if got := d.sums["install.sh"]; got != hex.EncodeToString(sum[:]) {
		t.Errorf("SHA256SUMS lists install.sh as %q, want the repository's %x", got, sum)
	}
}

// verifySig runs the check install.sh and docs/RELEASING.md give.
func verifySig(t *testing.T, signers, sums, sig string) ([]byte, error) {
	t.Helper()
	f, err := os.Open(sums)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	cmd := exec.Command(tstest.Tool(t, "ssh-keygen"), "-Y", "verify", "-f", signers, "-I", "release@hostlink", "-n", "hostlink-release", "-s", sig)
	cmd.Stdin = f
	return cmd.CombinedOutput()
}

// TestSignature verifies SHA256SUMS.sig with the throw-away key the snapshot
// was signed with, and that a changed SHA256SUMS, another key and another
// namespace all fail.
func TestSignature(t *testing.T) {
	d := loadDist(t, "HOSTLINK_RELEASE_DIST")
	signers := tstest.Env(t, "HOSTLINK_RELEASE_SIGNERS", "the allowed-signers file of the key .ci/release-check signs with")
	sums, sig := filepath.Join(d.dir, "SHA256SUMS"), filepath.Join(d.dir, "SHA256SUMS.sig")
	if out, err := verifySig(t, signers, sums, sig); err != nil {
		t.Fatalf("ssh-keygen -Y verify: %v\n%s", err, out)
	}
	tampered := filepath.Join(t.TempDir(), "SHA256SUMS")
	b, _ := os.ReadFile(sums)
	os.WriteFile(tampered, append(b, "0000000000000000000000000000000000000000000000000000000000000000  evil.tar.gz\n"...), 0o644)
	if out, err := verifySig(t, signers, tampered, sig); err == nil {
		t.Errorf("a changed SHA256SUMS verified:\n%s", out)
	}
	// The release key in the repository did not sign a snapshot.
	if out, err := verifySig(t, repoFile("packaging/keys/allowed_signers"), sums, sig); err == nil {
		t.Errorf("the snapshot verified with the release key:\n%s", out)
	}
	other := filepath.Join(t.TempDir(), "signers")
	s, _ := os.ReadFile(signers)
	os.WriteFile(other, bytes.Replace(s, []byte(`namespaces="hostlink-release"`), []byte(`namespaces="file"`), 1), 0o644)
	if out, err := verifySig(t, other, sums, sig); err == nil {
		t.Errorf("the signature verified for another namespace:\n%s", out)
	}
}

// TestReleaseKey checks that the key install.sh embeds is the one in
// packaging/keys, and that the allowed-signers entry names the public key.
func TestReleaseKey(t *testing.T) {
	signers, err := os.ReadFile(repoFile("packaging/keys/allowed_signers"))
	if err != nil {
		t.Fatal(err)
	}
	pub, err := os.ReadFile(repoFile("packaging/keys/hostlink-release.pub"))
	if err != nil {
		t.Fatal(err)
	}
	entry := strings.TrimSpace(string(signers))
	if fields := strings.Fields(string(pub)); len(fields) < 2 || !strings.HasSuffix(entry, fields[0]+" "+fields[1]) {
		t.Errorf("allowed_signers %q does not hold the key of hostlink-release.pub %q", entry, pub)
	}
	script, err := os.ReadFile(repoFile("install.sh"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(script), "RELEASE_SIGNER='"+entry+"'\n") {
		t.Errorf("install.sh does not embed the allowed_signers entry %q", entry)
	}
	// hostlink update's copy, and the docs that tell users to check by hand.
	embedded, err := os.ReadFile(repoFile("internal/update/allowed_signers"))
	if err != nil || strings.TrimSpace(string(embedded)) != entry {
		t.Errorf("internal/update/allowed_signers is %q (%v), want %q", embedded, err, entry)
	}
	for _, doc := range []string{"README.md", "docs/RELEASING.md"} {
		b, err := os.ReadFile(repoFile(doc))
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(string(b), entry) {
			t.Errorf("%s does not show the release key's allowed_signers entry %q", doc, entry)
		}
	}
	// The repositories' OpenPGP key: its fingerprint in the docs.
	fpr := runOut(t, exec.Command("gpg", "--batch", "--with-colons", "--show-keys", repoFile("packaging/keys/hostlink-archive-keyring.asc")))
	var fingerprint string
	for _, l := range strings.Split(fpr, "\n") {
		if f := strings.Split(l, ":"); f[0] == "fpr" && fingerprint == "" {
			fingerprint = f[9]
		}
	}
	if len(fingerprint) != 40 {
		t.Fatalf("packaging/keys/hostlink-archive-keyring.asc: no fingerprint in\n%s", fpr)
	}
	for _, doc := range []string{"README.md", "docs/RELEASING.md"} {
		b, _ := os.ReadFile(repoFile(doc))
		if !strings.Contains(string(b), fingerprint) {
			t.Errorf("%s does not give the repository key's fingerprint %s", doc, fingerprint)
		}
	}
}

// TestReproducible compares the two snapshots built from one commit in two
// clones at different paths: every file must be byte-identical.
func TestReproducible(t *testing.T) {
	a := loadDist(t, "HOSTLINK_RELEASE_DIST")
	b := loadDist(t, "HOSTLINK_RELEASE_DIST2")
	if a.meta.Commit != b.meta.Commit {
		t.Fatalf("the snapshots are of commits %s and %s", a.meta.Commit, b.meta.Commit)
	}
	files := []string{"SHA256SUMS", "SHA256SUMS.sig"}
	for name := range a.sums {
		files = append(files, name)
	}
	for _, typ := range []string{"Binary", "Homebrew Formula", "Scoop Manifest"} {
		for _, x := range a.ofType(typ) {
			rel, _ := filepath.Rel(a.dir, a.path(x))
			files = append(files, rel)
		}
	}
	for _, f := range files {
		x, err1 := os.ReadFile(a.file(f))
		y, err2 := os.ReadFile(b.file(f))
		if err1 != nil || err2 != nil {
			t.Errorf("%s: %v, %v", f, err1, err2)
			continue
		}
		if !bytes.Equal(x, y) {
			t.Errorf("%s differs between the two builds", f)
		}
	}
	t.Logf("%d files byte-identical", len(files))

	// GoReleaser lists winget installers in the order the archives were
	// finished, which varies; the manifests are not release files (they go
	// to winget-pkgs), so they must be equal up to that order.
	for _, x := range a.ofType("Winget Manifest") {
		rel, _ := filepath.Rel(a.dir, a.path(x))
		ma, mb := wingetSorted(t, filepath.Join(a.dir, rel)), wingetSorted(t, filepath.Join(b.dir, rel))
		if !reflect.DeepEqual(ma, mb) {
			t.Errorf("%s differs between the two builds (beyond the installers' order)", rel)
		}
	}
}

// wingetSorted reads a winget manifest with its Installers sorted by
// Architecture.
func wingetSorted(t *testing.T, path string) map[string]any {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if err := yaml.Unmarshal(b, &doc); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
	if in, ok := doc["Installers"].([]any); ok {
		slices.SortFunc(in, func(x, y any) int {
			return strings.Compare(fmt.Sprint(x.(map[string]any)["Architecture"]), fmt.Sprint(y.(map[string]any)["Architecture"]))
		})
	}
	return doc
}

// TestSBOMs checks each CycloneDX SBOM: it describes hostlink at the
// snapshot's version, for its platform, and lists its modules.
func TestSBOMs(t *testing.T) {
	d := loadDist(t, "HOSTLINK_RELEASE_DIST")
	for _, tg := range targets {
		name := "hostlink_" + d.meta.Version + "_" + tg.goos + "_" + tg.goarch + ".cdx.json"
		var bom struct {
			BOMFormat   string `json:"bomFormat"`
			SpecVersion string `json:"specVersion"`
			Metadata    struct {
				Component struct {
					Name    string `json:"name"`
					Version string `json:"version"`
					PURL    string `json:"purl"`
				} `json:"component"`
				Properties []struct {
					Name  string `json:"name"`
					Value string `json:"value"`
				} `json:"properties"`
				Tools []map[string]any `json:"tools"`
			} `json:"metadata"`
			Components []struct {
				Name    string `json:"name"`
				Version string `json:"version"`
				PURL    string `json:"purl"`
			} `json:"components"`
		}
		b, err := os.ReadFile(filepath.Join(d.dir, name))
		if err != nil {
			t.Errorf("no SBOM for %s/%s: %v", tg.goos, tg.goarch, err)
			continue
		}
		if err := json.Unmarshal(b, &bom); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if bom.BOMFormat != "CycloneDX" || bom.SpecVersion == "" {
			t.Errorf("%s: bomFormat %q specVersion %q", name, bom.BOMFormat, bom.SpecVersion)
		}
		if c := bom.Metadata.Component; c.Name != "github.com/hostlink/hostlink" || !strings.Contains(c.Version, d.meta.Version) {
			t.Errorf("%s: describes %s %s", name, c.Name, c.Version)
		}
		var mods []string
		// Every package URL names this SBOM's own target, not the
		// builder's (go env's) one.
		qualifiers := "goarch=" + tg.goarch + "&goos=" + tg.goos
		purls := []string{bom.Metadata.Component.PURL}
		std := ""
		for _, c := range bom.Components {
			mods = append(mods, c.Name)
			purls = append(purls, c.PURL)
			if c.Name == "std" {
				std = c.Version
			}
		}
		for _, p := range purls {
			if !strings.Contains(p, "?"+qualifiers+"&") {
				t.Errorf("%s: package URL %q does not name %s/%s", name, p, tg.goos, tg.goarch)
			}
		}
		contains(t, name, strings.Join(mods, " "), "modernc.org/sqlite", "github.com/alecthomas/kong")
		// The standard library, at the toolchain's version: its CVEs are
		// the binary's.
		if std != runtime.Version() {
			t.Errorf("%s: the standard library (std) is listed at %q, want %s", name, std, runtime.Version())
		}
		// Nothing of the machine that made it: the generator's own
		// executable differs wherever it was built.
		for _, tool := range bom.Metadata.Tools {
			if _, ok := tool["hashes"]; ok {
				t.Errorf("%s: the tool %v carries hashes of its executable", name, tool["name"])
			}
		}
		props := map[string]string{}
		for _, p := range bom.Metadata.Properties {
			props[p.Name] = p.Value
		}
		if props["cdx:gomod:build:env:GOOS"] != tg.goos || props["cdx:gomod:build:env:GOARCH"] != tg.goarch ||
			props["cdx:gomod:build:env:GOVERSION"] != runtime.Version() {
			t.Errorf("%s: build properties %v, want %s/%s and %s", name, props, tg.goos, tg.goarch, runtime.Version())
		}
	}
}
