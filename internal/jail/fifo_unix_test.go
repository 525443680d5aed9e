//go:build !windows

package jail

import (
	"path/filepath"
	"syscall"
	"testing"

	"github.com/hostlink/hostlink/internal/errcode"
)

// TestFIFORefused checks that opening a FIFO for reading neither blocks nor
// succeeds: os.Root alone would block forever on it.
func TestFIFORefused(t *testing.T) {
	r, base := sandbox(t)
	if err := syscall.Mkfifo(filepath.Join(base, "root", "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	_, _, err := r.OpenFile(mustResolve(t, r, "fifo"))
	if errcode.CodeOf(err) != errcode.NotAFile {
		t.Fatalf("OpenFile(fifo) = %v, want NOT_A_FILE", err)
	}
	if _, _, err := r.OpenFile(mustResolve(t, r, "sub")); errcode.CodeOf(err) != errcode.NotAFile {
		t.Fatalf("OpenFile(dir) = %v, want NOT_A_FILE", err)
	}
}
