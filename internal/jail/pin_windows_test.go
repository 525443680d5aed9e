package jail

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/hostlink/hostlink/internal/errcode"
)

// On Windows a checked delete or rename acts through a handle opened on
// the entry, whose identity must be the one the check accepted: an entry
// swapped after the check, before the system call (here by the check
// itself), is CONFLICT and stays.
func TestPinnedHandle(t *testing.T) {
	r, base, _ := sandboxMaybeLinks(t)
	root := filepath.Join(base, "root")
	swap := func(at At) error {
		p := filepath.Join(root, filepath.FromSlash(at.Path.String()))
		write(t, p+".new", "swapped")
		return os.Rename(p+".new", p)
	}
	for name, do := range map[string]func(p Path) error{
		"RemoveIf":      func(p Path) error { return r.RemoveIf(p, swap) },
		"RenameIf from": func(p Path) error { return r.RenameIf(p, mustResolve(t, r, "moved"), true, swap, nil) },
		"RemoveAllIf":   func(p Path) error { return r.RemoveAllIf(p, swap, nil) },
	} {
		os.Remove(filepath.Join(root, "moved"))
		write(t, filepath.Join(root, "f"), "shown")
		if err := do(mustResolve(t, r, "f")); errcode.CodeOf(err) != errcode.Conflict {
			t.Errorf("%s: %v, want CONFLICT", name, err)
		}
		if b, err := os.ReadFile(filepath.Join(root, "f")); string(b) != "swapped" {
			t.Errorf("%s: f = %q, %v; want the swapped-in file left", name, b, err)
		}
		if _, err := os.Lstat(filepath.Join(root, "moved")); err == nil {
			t.Errorf("%s: moved", name)
		}
	}
}
