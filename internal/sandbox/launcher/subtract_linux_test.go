package launcher

import (
	"os"
	"path/filepath"
	"slices"
	"testing"
)

// subtract grants everything below a root except the excluded paths, and
// never a symbolic link (which could lead into an excluded path).
func TestSubtract(t *testing.T) {
	root := t.TempDir()
	for _, d := range []string{"a/x", "a/y/deep", "b", "c"} {
		os.MkdirAll(filepath.Join(root, d), 0o700)
	}
	os.WriteFile(filepath.Join(root, "a", "f"), nil, 0o600)
	os.Symlink(filepath.Join(root, "a", "y"), filepath.Join(root, "a", "link"))
	j := func(ps ...string) []string {
		var out []string
		for _, p := range ps {
			out = append(out, filepath.Join(root, p))
		}
		return out
	}
	tests := []struct {
		name            string
		excluded        []string
		wantDirs, files []string
	}{
		{"nothing excluded", nil, j("."), nil},
		{"outside", []string{"/elsewhere"}, j("."), nil},
		{"one child", j("b"), j("a", "c"), nil},
		{"deeper", j("a/y"), j("a/x", "b", "c"), j("a/f")},
		{"the root", j("."), nil, nil},
		// a/y holds nothing but the excluded a/y/deep.
		{"two", j("a/y/deep", "c"), j("a/x", "b"), j("a/f")},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var dirs, files []string
			for _, g := range subtract(root, tt.excluded) {
				if g.dir {
					dirs = append(dirs, g.path)
				} else {
					files = append(files, g.path)
				}
			}
			slices.Sort(dirs)
			if !slices.Equal(dirs, tt.wantDirs) || !slices.Equal(files, tt.files) {
				t.Errorf("Subtract = %q %q, want %q %q", dirs, files, tt.wantDirs, tt.files)
			}
		})
	}
}
