//go:build unix

package sandbox

import (
	"os"
	"path/filepath"
	"testing"
)

// TestResolverIsEvalSymlinks resolves a tree of links, relative and
// absolute, chained, dangling, looping and through files, with one
// resolver for all of them (as a plan does), and expects what
// filepath.EvalSymlinks says of each.
func TestResolverIsEvalSymlinks(t *testing.T) {
	root := t.TempDir()
	at := func(p string) string { return filepath.Join(root, filepath.FromSlash(p)) }
	for _, d := range []string{"home/ada/.ssh", "home/ada/real/deep", "other/x"} {
		if err := os.MkdirAll(at(d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.WriteFile(at("home/ada/file"), nil, 0o644); err != nil {
		t.Fatal(err)
	}
	links := map[string]string{
		"home/ada/.aws":         "real",        // relative, to a directory
		"home/ada/.kube":        at("other/x"), // absolute
		"home/ada/chain":        ".aws",        // a link to a link
		"home/ada/up":           "../../other", // up and out
		"home/ada/dangling":     "nowhere",     // to nothing
		"home/ada/loop":         "loop",        // to itself
		"alias":                 "home/ada",    // a directory above the others
		"home/ada/real/deep/up": "../../../ada/.ssh",
	}
	for l, target := range links {
		if err := os.Symlink(target, at(l)); err != nil {
			t.Fatal(err)
		}
	}
	r := newResolver()
	for _, p := range []string{
		"/", root, "home", "home/ada", "home/ada/.ssh", "home/ada/.aws", "home/ada/.aws/deep", "home/ada/.kube",
		"home/ada/chain/deep/up", "home/ada/up/x", "home/ada/dangling", "home/ada/loop", "home/ada/loop/x",
		"home/ada/missing", "home/ada/missing/x", "home/ada/file", "home/ada/file/x", "alias/.aws/deep",
		"alias/chain/../.ssh", "alias/./.kube/", "home/ada/up/../.ssh", "home/ada/.aws/../file",
	} {
		if !filepath.IsAbs(p) {
			p = root + "/" + p // not cleaned: ".." after a link is EvalSymlinks' to take
		}
		want, wantErr := filepath.EvalSymlinks(p)
		got, err := r.eval(p)
		if got != want || (err == nil) != (wantErr == nil) {
			t.Errorf("eval(%s) = %q, %v; EvalSymlinks: %q, %v", p, got, err, want, wantErr)
		}
	}
}
