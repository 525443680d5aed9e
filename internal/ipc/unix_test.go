//go:build linux || darwin

package ipc

import (
	"errors"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/tstest"
)

// testListen listens in a short private temporary directory: t.TempDir
// can be longer than sun_path allows.
func testListen(t testing.TB) (net.Listener, string) {
	t.Helper()
	dir, err := os.MkdirTemp("", "ipc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	p := filepath.Join(dir, "s.sock")
	ln, err := listenAt(p)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ln.Close() })
	return ln, p
}

func TestListenPrivate(t *testing.T) {
	dir, err := os.MkdirTemp("", "ipc")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	p := filepath.Join(dir, "run", "s.sock")
	ln, err := Listen(p)
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	for path, want := range map[string]os.FileMode{filepath.Dir(p): 0o700, p: 0o600} {
		if fi, err := os.Stat(path); err != nil || fi.Mode().Perm() != want {
			t.Errorf("%s: %v, want mode %v", path, err, want)
		}
	}
}

func TestSocketPathTooLong(t *testing.T) {
	limit := maxSunPath[runtime.GOOS] // includes the NUL
	dirOf := func(pathLen int) string { return "/" + strings.Repeat("d", pathLen-len("/"+sockName)-1) }
	if p, err := Address(dirOf(limit)); err == nil || !strings.Contains(err.Error(), "XDG_RUNTIME_DIR") {
		t.Fatalf("Address giving %d bytes: %q %v", len(p), p, err)
	}
	if p, err := Address(dirOf(limit - 1)); err != nil || len(p) != limit-1 {
		t.Fatalf("Address giving %d bytes: %v", len(p), err)
	}
	if _, err := listenAt(dirOf(limit) + "/" + sockName); err == nil || !strings.Contains(err.Error(), "limit") {
		t.Fatalf("listen on a %d-byte path: %v", limit, err)
	}
}

// staleSocket leaves a socket file at p with nobody listening, as a
// killed daemon does.
func staleSocket(t *testing.T, p string) {
	t.Helper()
	ln, err := net.Listen("unix", p)
	if err != nil {
		t.Fatal(err)
	}
	ln.(*net.UnixListener).SetUnlinkOnClose(false)
	ln.Close()
}

// TestStartUp covers what Listen finds at the socket path.
func TestStartUp(t *testing.T) {
	tests := []struct {
		name    string
		prepare func(t *testing.T, p string)
		wantErr string // "" when Listen must succeed
		kept    bool   // the old file must still be there after a refusal
	}{
		{"nothing there", func(*testing.T, string) {}, "", false},
		{"stale socket of ours", staleSocket, "", false},
		{"live daemon", func(t *testing.T, p string) {
			ln, err := listenAt(p)
			if err != nil {
				t.Fatal(err)
			}
			t.Cleanup(func() { ln.Close() })
		}, ErrAlreadyRunning.Error(), true},
		{"not a socket", func(t *testing.T, p string) { os.WriteFile(p, []byte("x"), 0o600) }, "not a socket", true},
		{"stale socket of another user", func(t *testing.T, p string) {
			tstest.Root(t) // to give a socket away
			staleSocket(t, p)
			if err := os.Lchown(p, 65534, 65534); err != nil {
				t.Fatal(err)
			}
		}, "another user", true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			dir, err := os.MkdirTemp("", "ipc")
			if err != nil {
				t.Fatal(err)
			}
			defer os.RemoveAll(dir)
			p := filepath.Join(dir, "s.sock")
			tt.prepare(t, p)
			before, _ := os.Lstat(p)
			ln, err := listenAt(p)
			if tt.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				ln.Close()
				return
			}
			if err == nil {
				ln.Close()
				t.Fatal("Listen succeeded")
			}
			if !strings.Contains(err.Error(), tt.wantErr) {
				t.Fatalf("error %q does not say %q", err, tt.wantErr)
			}
			if after, _ := os.Lstat(p); tt.kept && (after == nil || !os.SameFile(before, after)) {
				t.Fatal("the existing file was replaced")
			}
		})
	}
}

// TestListenLock: while one listener serves a path, a second start fails
// as already running, even before looking at the socket; closing the first
// frees the path.
func TestListenLock(t *testing.T) {
	p := filepath.Join(t.TempDir(), "s.sock")
	ln, err := listenAt(p)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := listenAt(p); !errors.Is(err, ErrAlreadyRunning) {
		t.Fatalf("second listen: %v", err)
	}
	ln.Close()
	ln2, err := listenAt(p)
	if err != nil {
		t.Fatalf("listen after the first closed: %v", err)
	}
	ln2.Close()
}
