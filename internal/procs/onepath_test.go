package procs

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
)

// TestOneSpawningPath: no hostlink code outside this package starts a
// program (os/exec's Command or Cmd, os.StartProcess, syscall's fork and
// exec): everything goes through Start, Output or StartDetached, so that
// every child is registered, tracked and ended with hostlink. Tests, test
// support packages (named *test) and the benchmark harness may, and so may
// internal/sandbox: it is procs' own launcher (Prepare rewrites the
// command procs then starts and tracks; procs imports it, so it cannot
// call procs), and its one probe per process runs synchronously at start,
// with the parent-death signal on Linux.
func TestOneSpawningPath(t *testing.T) {
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	banned := map[string]map[string]bool{
		"exec":    {"Command": true, "CommandContext": true, "Cmd": true},
		"os":      {"StartProcess": true},
		"syscall": {"ForkExec": true, "StartProcess": true, "Exec": true},
	}
	fset := token.NewFileSet()
	checked := 0
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, path)
		rel = filepath.ToSlash(rel)
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") || rel == "bench" || rel == "internal/procs" || rel == "internal/sandbox" || strings.HasSuffix(d.Name(), "test") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		checked++
		ast.Inspect(f, func(n ast.Node) bool {
			sel, ok := n.(*ast.SelectorExpr)
			if !ok {
				return true
			}
			if id, ok := sel.X.(*ast.Ident); ok && banned[id.Name][sel.Sel.Name] {
				t.Errorf("%s: %s.%s starts a program outside internal/procs", fset.Position(sel.Pos()), id.Name, sel.Sel.Name)
			}
			return true
		})
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if checked < 100 {
		t.Fatalf("checked only %d files under %s", checked, root)
	}
}
