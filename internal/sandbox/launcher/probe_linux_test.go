package launcher

import (
	"net"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/hostlink/hostlink/internal/sandboxapi"
	"golang.org/x/sys/unix"
)

// TestTryUnconfined: run outside any sandbox, a probe reaches everything
// it tries, so it must report every rule it checks as not enforced. A
// check that could never succeed would make every probe look enforced.
func TestTryUnconfined(t *testing.T) {
	dir := t.TempDir()
	p := &Probe{OutsideDir: dir, HiddenDir: filepath.Join(dir, "hidden"), Pid: os.Getppid()}
	p.HiddenFile = filepath.Join(p.HiddenDir, "secret")
	if err := os.Mkdir(p.HiddenDir, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(p.HiddenFile, []byte("secret"), 0o600); err != nil {
		t.Fatal(err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	p.TCPPort = ln.Addr().(*net.TCPAddr).Port
	ul, err := net.Listen("unix", filepath.Join(dir, "s"))
	if err != nil {
		t.Fatal(err)
	}
	defer ul.Close()
	p.UnixSocket = ul.Addr().String()

	got := p.try()
	for _, rule := range []string{sandboxapi.RuleWrites, sandboxapi.RuleHiddenReads, sandboxapi.RuleHiddenListing, sandboxapi.RuleNetwork, sandboxapi.RuleUnixSockets, sandboxapi.RuleSignals} {
		if !slices.Contains(got, rule) {
			t.Errorf("try() = %q: %s missing", got, rule)
		}
	}
}

// TestConnects: a listener is reached, a closed port and a missing socket
// are not.
func TestConnects(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := ln.Addr().(*net.TCPAddr).Port
	if !connects(unix.AF_INET, 0, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}) {
		t.Error("no connection to a listening port")
	}
	ln.Close()
	if connects(unix.AF_INET, 0, &unix.SockaddrInet4{Port: port, Addr: [4]byte{127, 0, 0, 1}}) {
		t.Error("connected to a closed port")
	}
}

// TestPaths: the path helpers the launcher uses instead of path/filepath.
func TestPaths(t *testing.T) {
	for _, tt := range []struct{ got, want string }{
		{join("/", "tmp"), "/tmp"},
		{join("/tmp", "a"), "/tmp/a"},
		{below("/tmp", "/tmp/a/b"), "a/b"},
		{below("/", "/a/b"), "a/b"},
	} {
		if tt.got != tt.want {
			t.Errorf("got %q, want %q", tt.got, tt.want)
		}
	}
	dir := t.TempDir()
	real := filepath.Join(dir, "real")
	if err := os.Mkdir(real, 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(real, filepath.Join(dir, "link")); err != nil {
		t.Fatal(err)
	}
	want, err := filepath.EvalSymlinks(real)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{real, filepath.Join(dir, "link")} {
		if got, err := realPath(p); err != nil || got != want {
			t.Errorf("realPath(%q) = %q, %v; want %q", p, got, err, want)
		}
	}
	if _, err := realPath(filepath.Join(dir, "missing")); err == nil {
		t.Error("realPath of a missing path succeeded")
	}
}
