package files

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hostlink/hostlink/internal/errcode"
)

func TestResolveDir(t *testing.T) {
	e := newEnv(t, testLimits)
	e.write("root/sub/f.txt", "x")
	symlinks := os.Symlink("sub", filepath.Join(e.root, "link")) == nil
	tests := []struct {
		path, rel string
		code      errcode.Code
	}{
		{"", ".", ""},
		{".", ".", ""},
		{"sub", "sub", ""},
		{filepath.Join(e.root, "sub"), "sub", ""},
		{"sub/f.txt", "", errcode.NotADirectory},
		{"missing", "", errcode.PathNotFound},
		{"..", "", errcode.PathOutsideRoot},
		{filepath.Join(e.base, "outside"), "", errcode.PathOutsideRoot},
	}
	if symlinks {
		tests = append(tests, struct {
			path, rel string
			code      errcode.Code
		}{"link", "sub", ""})
	}
	for _, tt := range tests {
		d, err := e.svc.ResolveDir("", tt.path)
		if errcode.CodeOf(err) != tt.code {
			t.Errorf("ResolveDir(%q) = %v, want %q", tt.path, err, tt.code)
			continue
		}
		if err == nil && (d.Rel != tt.rel || d.Workdir != "main" || d.Abs != filepath.Join(e.svc.workdirs[0].Root.Dir(), filepath.FromSlash(tt.rel))) {
			t.Errorf("ResolveDir(%q) = %+v", tt.path, d)
		}
	}
}
