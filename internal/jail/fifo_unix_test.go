//go:build !windows

package jail

import (
	"net"
	"os"
	"path/filepath"
	"syscall"
	"testing"

	"github.com/hostlink/hostlink/internal/errcode"
)

// TestSpecialFilesRefused: FIFOs, sockets and devices are never read. A
// FIFO is opened without blocking (a plain open would wait for a writer
// forever), then refused.
func TestSpecialFilesRefused(t *testing.T) {
	r, base := sandbox(t)
	root := filepath.Join(base, "root")
	if err := syscall.Mkfifo(filepath.Join(root, "fifo"), 0o644); err != nil {
		t.Fatal(err)
	}
	names := []string{"fifo", "sub"}
	// Socket paths are short on macOS; the socket lives in its own temp dir
	// and is linked in by name.
	sockDir, _ := os.MkdirTemp("", "s")
	defer os.RemoveAll(sockDir)
	if ln, err := net.Listen("unix", filepath.Join(sockDir, "s")); err == nil {
		defer ln.Close()
		if os.Rename(filepath.Join(sockDir, "s"), filepath.Join(root, "sock")) == nil {
			names = append(names, "sock")
		}
	}
	if os.Geteuid() == 0 {
		// /dev/null's numbers (1, 3) on Linux; a device either way.
		if syscall.Mknod(filepath.Join(root, "dev"), syscall.S_IFCHR|0o644, 1<<8|3) == nil {
			names = append(names, "dev")
		}
	}
	for _, name := range names {
		jp := mustResolve(t, r, name)
		if _, _, err := r.OpenFile(jp); errcode.CodeOf(err) != errcode.NotAFile {
			t.Errorf("OpenFile(%s) = %v, want NOT_A_FILE", name, err)
		}
		d, err := r.OpenDirectory(mustResolve(t, r, "."))
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := d.OpenFile(name); errcode.CodeOf(err) != errcode.NotAFile {
			t.Errorf("Dir.OpenFile(%s) = %v, want NOT_A_FILE", name, err)
		}
		d.Close()
	}
	if len(names) < 3 {
		t.Logf("checked %v (no socket or device here)", names)
	}
}
