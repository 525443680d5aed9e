package jail

import (
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"golang.org/x/sys/unix"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/tstest"
)

// bindMount mounts dir on target for the test.
func bindMount(t *testing.T, dir, target string) {
	t.Helper()
	tstest.Root(t)
	if err := unix.Mount(dir, target, "", unix.MS_BIND, ""); err != nil {
		t.Fatalf("bind mount %s on %s: %v", dir, target, err)
	}
	t.Cleanup(func() { unix.Unmount(target, unix.MNT_DETACH) })
}

// TestMounts is finding 11 of issue #16: a recursive delete through a bind
// mount removed entries outside the root. Walks stay on the mount they
// start on (a mount point below is listed, not entered) and a recursive
// delete of a tree holding a mount fails naming it before deleting
// anything, unless the root allows crossing mounts. A bind mount of the
// same file system has the same device: mounts are told apart by mount
// ID. Single paths may cross.
func TestMounts(t *testing.T) {
	base := t.TempDir()
	root := filepath.Join(base, "root")
	outside := filepath.Join(base, "outside")
	os.MkdirAll(filepath.Join(root, "tree", "mnt"), 0o755)
	os.MkdirAll(filepath.Join(outside, "deep"), 0o755)
	write(t, filepath.Join(outside, "deep", "secret.txt"), "SECRET")
	write(t, filepath.Join(root, "tree", "a.txt"), "a")
	bindMount(t, outside, filepath.Join(root, "tree", "mnt"))

	for _, cross := range []bool{false, true} {
		r, err := Open(root, Options{CrossMounts: cross})
		if err != nil {
			t.Fatal(err)
		}
		defer r.Close()
		var seen []string
		var mountErr error
		err = r.WalkDir(mustResolve(t, r, "."), func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				mountErr = err
				return nil
			}
			seen = append(seen, p)
			return nil
		})
		if err != nil {
			t.Fatal(err)
		}
		entered := slices.Contains(seen, "tree/mnt/deep/secret.txt")
		switch {
		case !slices.Contains(seen, "tree/mnt"):
			t.Errorf("cross=%v: the mount point is not listed: %v", cross, seen)
		case cross && (!entered || mountErr != nil):
			t.Errorf("cross_mounts: the walk did not enter the mount: %v, %v", seen, mountErr)
		case !cross && (entered || errcode.CodeOf(mountErr) != MountCrossing):
			t.Errorf("the walk entered the mount (%v) or did not say why not (%v)", seen, mountErr)
		}
		if !cross {
			if mountErr != nil && errcode.As(mountErr).Details["mount"] != "tree/mnt" {
				t.Errorf("MOUNT_CROSSING names %v, want tree/mnt", errcode.As(mountErr).Details)
			}
			// The delete's tree starts on its parent's file system:
			// tree/mnt/deep would not cross (it is all on the mount).
			for _, p := range []string{"tree", "tree/mnt"} {
				err := r.RemoveAll(mustResolve(t, r, p))
				if errcode.CodeOf(err) != MountCrossing || errcode.As(err).Details["mount"] != "tree/mnt" {
					t.Errorf("RemoveAll(%s) = %v, want MOUNT_CROSSING naming tree/mnt", p, err)
				}
			}
			if _, err := os.Stat(filepath.Join(root, "tree", "a.txt")); err != nil {
				t.Errorf("a refused RemoveAll deleted a.txt: %v", err)
			}
		}
		// A single path may cross: the mount was made by someone who
		// could reach it anyway.
		if f, _, err := r.OpenFile(mustResolve(t, r, "tree/mnt/deep/secret.txt")); err != nil {
			t.Errorf("reading through a mount: %v", err)
		} else {
			f.Close()
		}
	}
	if b, err := os.ReadFile(filepath.Join(outside, "deep", "secret.txt")); err != nil || string(b) != "SECRET" {
		t.Fatalf("the outside tree changed: %q, %v", b, err)
	}
}
