package jail

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"syscall"
	"testing"

	"github.com/hostlink/hostlink/internal/errcode"
)

// symlinkOrSkip makes a symlink, skipping the test where the OS refuses
// them (Windows without the privilege, Wine).
func symlinkOrSkip(t *testing.T, target, name string) {
	t.Helper()
	if err := os.Symlink(target, name); err != nil {
		if runtime.GOOS == "windows" {
			t.Skipf("symlinks unavailable: %v", err)
		}
		t.Fatal(err)
	}
}

// TestSymlinkHopLimit: a resolution follows at most maxHops symlinks, as
// the kernel does (MAXSYMLINKS is 40 on Linux); one more is refused.
func TestSymlinkHopLimit(t *testing.T) {
	dir := t.TempDir()
	write(t, filepath.Join(dir, "f"), "end")
	// l0 -> l1 -> ... -> l40 -> f: opening li follows 41-i links.
	for i := 0; i <= maxHops; i++ {
		target := fmt.Sprintf("l%d", i+1)
		if i == maxHops {
			target = "f"
		}
		symlinkOrSkip(t, target, filepath.Join(dir, fmt.Sprintf("l%d", i)))
	}
	r, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()
	for _, tt := range []struct {
		name string
		hops int
		code errcode.Code
	}{
		{"l2", maxHops - 1, ""},
		{"l1", maxHops, ""},
		{"l0", maxHops + 1, errcode.PathOutsideRoot},
	} {
		jp := mustResolve(t, r, tt.name)
		f, _, err := r.OpenFile(jp)
		if err == nil {
			f.Close()
		}
		_, serr := r.Stat(jp)
		if errcode.CodeOf(err) != tt.code || errcode.CodeOf(serr) != tt.code {
			t.Errorf("%d hops: OpenFile %v, Stat %v; want %q", tt.hops, err, serr, tt.code)
		}
		if runtime.GOOS == "linux" {
			// The kernel draws the line at the same place.
			_, kerr := os.ReadFile(filepath.Join(dir, tt.name))
			if (kerr == nil) != (tt.code == "") || (kerr != nil && !errors.Is(kerr, syscall.ELOOP)) {
				t.Errorf("%d hops: the kernel says %v", tt.hops, kerr)
			}
		}
	}
}

// TestStepLimit: one resolution opens at most maxSteps components, so link
// targets made of "x/.." pairs (each ".." restarts the walk from the root)
// cannot make a walk arbitrarily long. The kernel has no such bound; the
// jail answers PATH_TOO_LONG past it.
func TestStepLimit(t *testing.T) {
	if lexicalLinks {
		t.Skip("link targets are cleaned lexically here, so x/.. costs no step")
	}
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "x", "y", "z"), 0o755); err != nil {
		t.Fatal(err)
	}
	write(t, filepath.Join(dir, "x", "y", "f"), "at")
	write(t, filepath.Join(dir, "x", "y", "z", "f"), "past")
	pairs := func(n int) string { return strings.Repeat("x/../", n) }
	// Resolving "a1" costs one step for each of a1, a2, a3, two for each
	// "x/.." pair (open x, restart at ".."), and one for each component of
	// the tail: 3 + 2*2045 + 3 = maxSteps with tail x/y/f, one more with
	// x/y/z/f. (Three links, since one target holds at most PATH_MAX bytes.)
	const total = 2045
	if 6+2*total != maxSteps {
		t.Fatalf("the test's arithmetic assumes maxSteps = %d", 6+2*total)
	}
	for _, set := range []struct{ prefix, tail string }{{"a", "x/y/f"}, {"b", "x/y/z/f"}} {
		p := set.prefix
		symlinkOrSkip(t, pairs(700)+p+"2", filepath.Join(dir, p+"1"))
		symlinkOrSkip(t, pairs(700)+p+"3", filepath.Join(dir, p+"2"))
		symlinkOrSkip(t, pairs(total-1400)+set.tail, filepath.Join(dir, p+"3"))
	}
	r, err := Open(dir, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer r.Close()

	at := mustResolve(t, r, "a1")
	f, _, err := r.OpenFile(at)
	if err != nil {
		t.Fatalf("at the limit: OpenFile %v", err)
	}
	b := make([]byte, 8)
	n, _ := f.Read(b)
	f.Close()
	if string(b[:n]) != "at" {
		t.Errorf("at the limit: read %q", b[:n])
	}
	if c, err := r.Canonical(at); err != nil || c.String() != "x/y/f" {
		t.Errorf("at the limit: Canonical = %v, %v", c, err)
	}

	past := mustResolve(t, r, "b1")
	if _, _, err := r.OpenFile(past); errcode.CodeOf(err) != PathTooLong {
		t.Errorf("past the limit: OpenFile %v, want %s", err, PathTooLong)
	}
	if _, err := r.Stat(past); errcode.CodeOf(err) != PathTooLong {
		t.Errorf("past the limit: Stat %v, want %s", err, PathTooLong)
	}
	if _, err := r.Canonical(past); errcode.CodeOf(err) != PathTooLong {
		t.Errorf("past the limit: Canonical %v, want %s", err, PathTooLong)
	}
}
