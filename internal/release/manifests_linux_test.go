package release

import (
	"encoding/json"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"strings"
	"testing"

	"github.com/google/jsonschema-go/jsonschema"
	"go.yaml.in/yaml/v3"

	"github.com/hostlink/hostlink/internal/tstest"
)

// validate checks the document v (decoded JSON or YAML) against the
// vendored schema packaging/schemas/name.
func validate(t *testing.T, name string, v any) {
	t.Helper()
	b, err := os.ReadFile(repoFile("packaging/schemas/" + name))
	if err != nil {
		t.Fatal(err)
	}
	var s jsonschema.Schema
	if err := json.Unmarshal(b, &s); err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	rs, err := s.Resolve(nil)
	if err != nil {
		t.Fatalf("%s: %v", name, err)
	}
	if err := rs.Validate(v); err != nil {
		t.Errorf("does not validate against %s: %v", name, err)
	}
}

// TestHomebrewFormula checks the formula with ruby -c and that it installs
// the darwin and linux archives of this release, by their checksums.
func TestHomebrewFormula(t *testing.T) {
	d := loadDist(t, "HOSTLINK_RELEASE_DIST")
	ruby := tstest.Tool(t, "ruby")
	f := d.path(d.one(t, "Homebrew Formula", "", ""))
	if out := runOut(t, exec.Command(ruby, "-c", f)); !strings.Contains(out, "Syntax OK") {
		t.Errorf("ruby -c %s: %s", f, out)
	}
	b, _ := os.ReadFile(f)
	formula := string(b)
	contains(t, "formula", formula, `class Hostlink < Formula`, `license "BSD-3-Clause"`, `version "`+d.meta.Version+`"`,
		`bin.install "hostlink"`, `bash_completion.install "completions/hostlink.bash"`, `man1.install "manpages/hostlink.1.gz"`,
		"  service do\n    run [opt_bin/\"hostlink\", \"serve\"]\n    keep_alive crashed: true\n  end\n")
	for _, tg := range targets {
		if tg.goos == "windows" {
			continue
		}
		a := d.one(t, "Archive", tg.goos, tg.goarch)
		contains(t, "formula", formula, "/"+a.Name+`"`, `sha256 "`+d.sums[a.Name]+`"`)
	}
}

// TestScoopManifest validates the Scoop manifest against Scoop's schema and
// checks its archives and hashes.
func TestScoopManifest(t *testing.T) {
	d := loadDist(t, "HOSTLINK_RELEASE_DIST")
	b, err := os.ReadFile(d.path(d.one(t, "Scoop Manifest", "", "")))
	if err != nil {
		t.Fatal(err)
	}
	var doc any
	if err := json.Unmarshal(b, &doc); err != nil {
		t.Fatal(err)
	}
	validate(t, "scoop-manifest.schema.json", doc)
	var m struct {
		Version      string `json:"version"`
		License      string `json:"license"`
		Architecture map[string]struct {
			URL  string   `json:"url"`
			Hash string   `json:"hash"`
			Bin  []string `json:"bin"`
		} `json:"architecture"`
	}
	json.Unmarshal(b, &m)
	if m.Version != d.meta.Version || m.License != "BSD-3-Clause" {
		t.Errorf("scoop manifest: version %q license %q", m.Version, m.License)
	}
	for scoopArch, goarch := range map[string]string{"64bit": "amd64", "arm64": "arm64"} {
		a := d.one(t, "Archive", "windows", goarch)
		got := m.Architecture[scoopArch]
		if path.Base(got.URL) != a.Name || got.Hash != d.sums[a.Name] || len(got.Bin) != 1 || got.Bin[0] != "hostlink.exe" {
			t.Errorf("scoop %s: %+v, want %s with hash %s", scoopArch, got, a.Name, d.sums[a.Name])
		}
	}
}

// TestWingetManifests validates the three winget manifests against the
// winget schemas and checks the installers' archives and hashes.
func TestWingetManifests(t *testing.T) {
	d := loadDist(t, "HOSTLINK_RELEASE_DIST")
	docs := map[string]map[string]any{}
	for _, a := range d.ofType("Winget Manifest") {
		b, err := os.ReadFile(d.path(a))
		if err != nil {
			t.Fatal(err)
		}
		var doc map[string]any
		if err := yaml.Unmarshal(b, &doc); err != nil {
			t.Fatalf("%s: %v", a.Name, err)
		}
		typ, _ := doc["ManifestType"].(string)
		docs[typ] = doc
		t.Run(typ, func(t *testing.T) {
			// YAML's types are JSON's here; the round trip gives the
			// validator the same types a JSON decoder would.
			j, err := json.Marshal(doc)
			if err != nil {
				t.Fatal(err)
			}
			var v any
			json.Unmarshal(j, &v)
			validate(t, "winget-manifest."+typ+"."+doc["ManifestVersion"].(string)+".schema.json", v)
		})
	}
	for _, typ := range []string{"version", "installer", "defaultLocale"} {
		doc := docs[typ]
		if doc == nil {
			t.Fatalf("no winget %s manifest among %v", typ, filepath.Join(d.dir, "winget"))
		}
		if doc["PackageIdentifier"] != "hostlink.hostlink" || doc["PackageVersion"] != d.meta.Version {
			t.Errorf("winget %s: identifier %v version %v", typ, doc["PackageIdentifier"], doc["PackageVersion"])
		}
	}
	if l := docs["defaultLocale"]["License"]; l != "BSD-3-Clause" {
		t.Errorf("winget license %v", l)
	}
	installers, _ := docs["installer"]["Installers"].([]any)
	seen := map[string]bool{}
	for _, x := range installers {
		in, _ := x.(map[string]any)
		arch, _ := in["Architecture"].(string)
		goarch := map[string]string{"x64": "amd64", "arm64": "arm64"}[arch]
		a := d.one(t, "Archive", "windows", goarch)
		url, _ := in["InstallerUrl"].(string)
		sum, _ := in["InstallerSha256"].(string)
		if path.Base(url) != a.Name || !strings.EqualFold(sum, d.sums[a.Name]) {
			t.Errorf("winget installer %s: %s %s, want %s %s", arch, url, sum, a.Name, d.sums[a.Name])
		}
		seen[goarch] = true
	}
	if !seen["amd64"] || !seen["arm64"] {
		t.Errorf("winget installers cover %v, want amd64 and arm64", seen)
	}
}
