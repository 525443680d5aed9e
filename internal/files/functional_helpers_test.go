package files

import (
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/hostlink/hostlink/internal/errcode"
)

// Helpers shared by the functional tests (read_test.go, write_test.go, …).

// smallLimits are tiny so every limit can be reached at and one past it.
var smallLimits = Limits{
	MaxReadBytes:       16,
	MaxWriteBytes:      16,
	MaxListEntries:     5,
	MaxSearchMatches:   3,
	MaxSearchBytes:     64,
	MaxSearchFileBytes: 16,
}

// fail is call that must fail with want; it returns the failed call's
// (empty) result for symmetry.
func (e *env) fail(want errcode.Code, op string, args map[string]any) {
	e.t.Helper()
	m, code := e.call(op, args)
	if code != want {
		e.t.Fatalf("%s(%v): code %q (result %v), want %q", op, args, code, m, want)
	}
}

// symlink makes a real symlink at rel (below e.base) pointing to target,
// skipping the test where the OS refuses (Windows without the privilege).
func (e *env) symlink(target, rel string) {
	e.t.Helper()
	err := os.Symlink(filepath.FromSlash(target), filepath.Join(e.base, filepath.FromSlash(rel)))
	if err != nil {
		if runtime.GOOS == "windows" {
			e.t.Skipf("symlinks unavailable: %v", err)
		}
		e.t.Fatal(err)
	}
}

// mustRead returns the content of a file below e.base, failing if missing.
func (e *env) mustRead(rel string) string {
	e.t.Helper()
	s, ok := e.read(rel)
	if !ok {
		e.t.Fatalf("%s does not exist", rel)
	}
	return s
}

// exists reports whether rel (below e.base) exists, without following links.
func (e *env) exists(rel string) bool {
	_, err := os.Lstat(filepath.Join(e.base, filepath.FromSlash(rel)))
	return err == nil
}

// noTemps fails if any hostlink temporary file is left below e.base.
func (e *env) noTemps() {
	e.t.Helper()
	filepath.WalkDir(e.base, func(p string, d fs.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".hostlink-tmp-") {
			e.t.Errorf("temporary file left behind: %s", p)
		}
		return nil
	})
}

func sha(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

func str(m map[string]any, k string) string {
	s, _ := m[k].(string)
	return s
}

func num(m map[string]any, k string) float64 {
	f, _ := m[k].(float64)
	return f
}

func flag(m map[string]any, k string) bool {
	b, _ := m[k].(bool)
	return b
}

// list returns m[k] as a list of objects.
func list(m map[string]any, k string) []map[string]any {
	raw, _ := m[k].([]any)
	out := make([]map[string]any, 0, len(raw))
	for _, r := range raw {
		o, _ := r.(map[string]any)
		out = append(out, o)
	}
	return out
}

// paths returns the "path" field of each object.
func paths(objs []map[string]any) []string {
	out := make([]string, 0, len(objs))
	for _, o := range objs {
		out = append(out, str(o, "path"))
	}
	return out
}

func unix() bool { return runtime.GOOS != "windows" }
