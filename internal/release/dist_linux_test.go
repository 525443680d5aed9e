package release

import (
	"bufio"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/tstest"
)

// targets are the six platforms every release carries.
var targets = []struct{ goos, goarch string }{
	{"linux", "amd64"}, {"linux", "arm64"},
	{"darwin", "amd64"}, {"darwin", "arm64"},
	{"windows", "amd64"}, {"windows", "arm64"},
}

// artifact is one entry of GoReleaser's dist/artifacts.json.
type artifact struct {
	Name   string         `json:"name"`
	Path   string         `json:"path"`
	Goos   string         `json:"goos"`
	Goarch string         `json:"goarch"`
	Type   string         `json:"type"`
	Extra  map[string]any `json:"extra"`
}

// dist is a snapshot release directory.
type dist struct {
	dir  string
	meta struct {
		ProjectName string `json:"project_name"`
		Version     string `json:"version"`
		Commit      string `json:"commit"`
	}
	artifacts []artifact
	sums      map[string]string // SHA256SUMS: file name -> hex digest
}

// loadDist reads the snapshot named by the environment variable env.
func loadDist(t *testing.T, env string) *dist {
	t.Helper()
	dir := tstest.Env(t, env, "run bash .ci/release-check, which builds the snapshot release and runs these tests")
	d := &dist{dir: dir}
	readJSON(t, filepath.Join(dir, "metadata.json"), &d.meta)
	readJSON(t, filepath.Join(dir, "artifacts.json"), &d.artifacts)
	d.sums = readSums(t, filepath.Join(dir, "SHA256SUMS"))
	return d
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		t.Fatalf("%s: %v", path, err)
	}
}

// readSums parses a SHA256SUMS file: "<hex>  <name>" per line.
func readSums(t *testing.T, path string) map[string]string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sums := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		if !ok || len(sum) != 64 || name == "" {
			t.Fatalf("%s: malformed line %q", path, sc.Text())
		}
		sums[name] = sum
	}
	if err := sc.Err(); err != nil {
		t.Fatal(err)
	}
	return sums
}

// file is where a file SHA256SUMS lists is on disk: install.sh is the
// snapshot's source (its clone's), the rest are in the dist directory.
func (d *dist) file(name string) string {
	if name == "install.sh" {
		return filepath.Join(filepath.Dir(d.dir), name)
	}
	return filepath.Join(d.dir, name)
}

// path is where an artifact is on disk (artifacts.json paths are relative
// to the project, with the dist directory first).
func (d *dist) path(a artifact) string {
	_, rest, _ := strings.Cut(filepath.ToSlash(a.Path), "/")
	return filepath.Join(d.dir, filepath.FromSlash(rest))
}

func (d *dist) ofType(typ string) []artifact {
	var out []artifact
	for _, a := range d.artifacts {
		if a.Type == typ {
			out = append(out, a)
		}
	}
	return out
}

// one returns the single artifact of typ for goos/goarch ("" matches any).
func (d *dist) one(t *testing.T, typ, goos, goarch string) artifact {
	t.Helper()
	var found []artifact
	for _, a := range d.ofType(typ) {
		if (goos == "" || a.Goos == goos) && (goarch == "" || a.Goarch == goarch) {
			found = append(found, a)
		}
	}
	if len(found) != 1 {
		t.Fatalf("want one %s artifact for %s/%s, found %d: %+v", typ, goos, goarch, len(found), found)
	}
	return found[0]
}

func fileSHA256(t *testing.T, path string) string {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		t.Fatal(err)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// runOut runs a command and returns its combined output, failing the test
// when it does not exit 0.
func runOut(t *testing.T, cmd *exec.Cmd) string {
	t.Helper()
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%s: %v\n%s", strings.Join(cmd.Args, " "), err, out)
	}
	return string(out)
}

// contains fails the test unless every want is in s.
func contains(t *testing.T, what, s string, want ...string) {
	t.Helper()
	for _, w := range want {
		if !strings.Contains(s, w) {
			t.Errorf("%s lacks %q:\n%s", what, w, s)
		}
	}
}

// repoFile is a file of this repository, by its path from the root.
func repoFile(rel string) string {
	return filepath.Join("..", "..", filepath.FromSlash(rel))
}

// sortedKeys is for stable messages.
func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	return keys
}

func TestSnapshotHasEveryTarget(t *testing.T) {
	d := loadDist(t, "HOSTLINK_RELEASE_DIST")
	if d.meta.ProjectName != "hostlink" || d.meta.Version == "" || len(d.meta.Commit) != 40 {
		t.Fatalf("metadata.json: %+v", d.meta)
	}
	for _, tg := range targets {
		a := d.one(t, "Archive", tg.goos, tg.goarch)
		ext := ".tar.gz"
		if tg.goos == "windows" {
			ext = ".zip"
		}
		if want := fmt.Sprintf("hostlink_%s_%s_%s%s", d.meta.Version, tg.goos, tg.goarch, ext); a.Name != want {
			t.Errorf("archive %q, want %q", a.Name, want)
		}
	}
	for _, arch := range []string{"amd64", "arm64"} {
		for _, format := range []string{"deb", "rpm"} {
			found := 0
			for _, a := range d.ofType("Linux Package") {
				if a.Goarch == arch && strings.HasSuffix(a.Name, "."+format) {
					found++
				}
			}
			if found != 1 {
				t.Errorf("%d .%s packages for linux/%s, want 1", found, format, arch)
			}
		}
	}
	t.Logf("snapshot %s of %s; SHA256SUMS lists %s", d.meta.Version, d.meta.Commit, strings.Join(sortedKeys(d.sums), ", "))
}
