package autostart

import (
	"os"
	"path/filepath"
	"strings"

	"github.com/hostlink/hostlink/internal/errcode"
)

// CodeTemporaryExecutable: install was asked to start a binary that will
// not be there at the next login, one in the Go build cache or a
// temporary directory (what `go run` and `go test` run). details.executable
// names it.
const CodeTemporaryExecutable errcode.Code = "EXECUTABLE_IS_TEMPORARY"

// CheckLasting refuses exe when it lies inside the Go build cache
// (gocache, or a go-build directory `go run` makes) or inside tempDir:
// a unit starting it would fail once the cache is trimmed or the
// temporary directory cleaned.
func CheckLasting(exe, gocache, tempDir string) error {
	exe = resolved(exe)
	where := ""
	switch {
	case gocache != "" && within(exe, resolved(gocache)):
		where = "the Go build cache (" + gocache + ")"
	case hasGoBuildDir(exe):
		where = "a `go run` build directory"
	case tempDir != "" && within(exe, resolved(tempDir)):
		where = "the temporary directory " + tempDir
	default:
		return nil
	}
	return errcode.New(CodeTemporaryExecutable, "%s is inside %s, which does not last: build a binary that stays first (`go build -o ~/.local/bin/hostlink ./cmd/hostlink` or `go install ./cmd/hostlink`) or use a release, then run that binary's `hostlink install`", exe, where).
		With("executable", exe)
}

// GoCache is the Go build cache: $GOCACHE, else the one `go env -w`
// set in Go's environment file, else Go's default under the user's cache
// directory. It is read, not asked of `go env`: install runs no program
// but the service manager's.
func GoCache() string {
	if c := os.Getenv("GOCACHE"); c != "" {
		return c
	}
	if c := goEnvFile("GOCACHE"); c != "" && c != "off" {
		return c
	}
	if dir, err := os.UserCacheDir(); err == nil {
		return filepath.Join(dir, "go-build")
	}
	return ""
}

// goEnvFile returns key's value in Go's environment file ($GOENV, else
// go/env under the user's config directory), or "".
func goEnvFile(key string) string {
	path := os.Getenv("GOENV")
	if path == "" {
		dir, err := os.UserConfigDir()
		if err != nil {
			return ""
		}
		path = filepath.Join(dir, "go", "env")
	}
	if path == "off" {
		return ""
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return ""
	}
	for line := range strings.Lines(string(b)) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), key+"="); ok {
			return strings.TrimSpace(v)
		}
	}
	return ""
}

func resolved(p string) string {
	if r, err := filepath.EvalSymlinks(p); err == nil {
		return r
	}
	return filepath.Clean(p)
}

// within reports whether p is dir or below it.
func within(p, dir string) bool {
	rel, err := filepath.Rel(dir, p)
	return err == nil && rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel)
}

// hasGoBuildDir reports a go-build… directory on p's path, where `go run`
// puts the binary it runs ($GOTMPDIR/go-build123/b001/exe/).
func hasGoBuildDir(p string) bool {
	for _, part := range strings.Split(filepath.ToSlash(filepath.Dir(p)), "/") {
		if strings.HasPrefix(part, "go-build") {
			return true
		}
	}
	return false
}
