package files

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	sys "golang.org/x/sys/unix"

	"github.com/hostlink/hostlink/internal/jail"
	"github.com/hostlink/hostlink/internal/tstest"
)

// TestMountOps is finding 11 of issue #16 through the operations: a
// recursive delete through a bind mount removed entries outside the
// workdir. Listings, find_files and search_text list a mount point but do
// not enter it; a recursive delete of a tree holding one fails with
// MOUNT_CROSSING naming it and deletes nothing; cross_mounts = true lets
// walks in.
func TestMountOps(t *testing.T) {
	tstest.Root(t)
	for _, cross := range []bool{false, true} {
		e := newEnvSetup(t, testLimits, func(e *env) jail.Options {
			e.write("outside/deep/secret.txt", "SECRET-4b7d")
			e.write("root/tree/a.txt", "a")
			mnt := filepath.Join(e.root, "tree", "mnt")
			os.MkdirAll(mnt, 0o755)
			if err := sys.Mount(filepath.Join(e.base, "outside"), mnt, "", sys.MS_BIND, ""); err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { sys.Unmount(mnt, sys.MNT_DETACH) })
			return jail.Options{CrossMounts: cross}
		})
		listed := strings.Join(paths(list(e.ok("list_directory", map[string]any{"recursive": true}), "entries")), " ")
		found := len(list(e.ok("find_files", map[string]any{"pattern": "**/secret.txt"}), "matches"))
		matches := len(list(e.ok("search_text", map[string]any{"query": "SECRET-4b7d"}), "matches"))
		entered := strings.Contains(listed, "tree/mnt/deep")
		if !strings.Contains(listed, "tree/mnt") || entered != cross || (found == 1) != cross || (matches == 1) != cross {
			t.Errorf("cross_mounts=%v: listed %q, find %d, search %d", cross, listed, found, matches)
		}
		if cross {
			continue
		}
		res, code := e.call("delete", map[string]any{"path": "tree", "recursive": true})
		if code != jail.MountCrossing {
			t.Fatalf("delete tree: %q %v, want MOUNT_CROSSING", code, res)
		}
		if got, ok := e.read("root/tree/a.txt"); !ok || got != "a" {
			t.Errorf("a refused delete removed tree/a.txt")
		}
		if got, _ := e.read("outside/deep/secret.txt"); got != "SECRET-4b7d" {
			t.Fatalf("the outside tree changed")
		}
		// One file through the mount is a single path: allowed.
		if got := e.ok("read_file", map[string]any{"path": "tree/mnt/deep/secret.txt"}); got["content"] != "SECRET-4b7d" {
			t.Errorf("read through the mount: %v", got)
		}
	}
}
