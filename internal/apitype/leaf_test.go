package apitype

import (
	"go/build"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

const module = "github.com/hostlink/hostlink/"

// TestTypesPackagesAreLeaves keeps the API types packages (this one and
// every internal/*api) free of implementations: on every OS hostlink
// builds for, each imports, directly or not, only the standard library,
// the other types packages, errcode, version and textsafe (all leaves;
// textsafe is the one JSON string escaper, which fileapi's results use to
// encode their content), and desktop/native, the desktop backends' types
// and interfaces (standard library and errcode only), whose monitors,
// rectangles and readiness desktopapi's results report. A
// transport or the CLI that imports them for types links nothing else.
func TestTypesPackagesAreLeaves(t *testing.T) {
	internal, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dirs, err := os.ReadDir(internal)
	if err != nil {
		t.Fatal(err)
	}
	allowed := []string{"internal/errcode", "internal/version", "internal/textsafe", "internal/desktop/native"}
	var roots []string
	for _, d := range dirs {
		if d.IsDir() && (d.Name() == "apitype" || strings.HasSuffix(d.Name(), "api")) {
			roots = append(roots, "internal/"+d.Name())
		}
	}
	allowed = append(allowed, roots...)
	if len(roots) < 3 {
		t.Fatalf("found only %v: the test no longer finds the types packages", roots)
	}
	for _, goos := range []string{"linux", "darwin", "windows"} {
		ctx := build.Default
		ctx.GOOS, ctx.GOARCH, ctx.CgoEnabled = goos, "amd64", false
		seen := map[string]bool{}
		var walk func(rel, from string)
		walk = func(rel, from string) {
			if seen[rel] {
				return
			}
			seen[rel] = true
			if !slices.Contains(allowed, rel) {
				t.Errorf("%s: %s imports %s, which is not a types package", goos, from, rel)
				return
			}
			p, err := ctx.ImportDir(filepath.Join(internal, "..", filepath.FromSlash(rel)), 0)
			if err != nil {
				t.Fatalf("%s: %s: %v", goos, rel, err)
			}
			for _, imp := range p.Imports {
				switch {
				case strings.HasPrefix(imp, module):
					walk(strings.TrimPrefix(imp, module), rel)
				case strings.Contains(strings.Split(imp, "/")[0], "."):
					t.Errorf("%s: %s imports %s, outside the standard library", goos, rel, imp)
				}
			}
		}
		for _, r := range roots {
			walk(r, r)
		}
	}
}
