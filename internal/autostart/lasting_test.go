package autostart

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/errcode"
)

func TestCheckLasting(t *testing.T) {
	base := t.TempDir()
	cache := filepath.Join(base, "cache", "go-cache")
	tmp := filepath.Join(base, "tmp")
	home := filepath.Join(base, "home")
	for _, d := range []string{cache, tmp, home} {
		os.MkdirAll(d, 0o755)
	}
	tests := []struct {
		name, exe string
		refused   bool
	}{
		{"installed", filepath.Join(home, ".local", "bin", "hostlink"), false},
		{"beside the cache", filepath.Join(base, "cache", "go-cache-not", "hostlink"), false},
		{"in the build cache", filepath.Join(cache, "ab", "hostlink"), true},
		{"go run's build directory", filepath.Join(home, "gotmp", "go-build2207733", "b001", "exe", "hostlink"), true},
		{"in the temporary directory", filepath.Join(tmp, "hostlink"), true},
		{"below it", filepath.Join(tmp, "x", "y", "hostlink"), true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := CheckLasting(tt.exe, cache, tmp)
			if !tt.refused {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var e *errcode.Error
			if !errors.As(err, &e) || e.Code != CodeTemporaryExecutable {
				t.Fatalf("err = %v, want %s", err, CodeTemporaryExecutable)
			}
			for _, want := range []string{tt.exe, "go build", "go install", "release"} {
				if !strings.Contains(err.Error(), want) {
					t.Errorf("%q does not say %s", err, want)
				}
			}
		})
	}
}

// TestGoCache: the build cache is found where the go command would look,
// without running it.
func TestGoCache(t *testing.T) {
	dir := t.TempDir()
	envFile := filepath.Join(dir, "env")
	os.WriteFile(envFile, []byte("GOPROXY=direct\nGOCACHE="+filepath.Join(dir, "written")+"\n"), 0o600)
	t.Setenv("GOCACHE", filepath.Join(dir, "set"))
	t.Setenv("GOENV", envFile)
	if got := GoCache(); got != filepath.Join(dir, "set") {
		t.Errorf("with $GOCACHE: %q", got)
	}
	t.Setenv("GOCACHE", "")
	if got := GoCache(); got != filepath.Join(dir, "written") {
		t.Errorf("from go env -w: %q", got)
	}
	t.Setenv("GOENV", "off")
	want := ""
	if d, err := os.UserCacheDir(); err == nil {
		want = filepath.Join(d, "go-build")
	}
	if got := GoCache(); got != want {
		t.Errorf("Go's default: %q, want %q", got, want)
	}
}
