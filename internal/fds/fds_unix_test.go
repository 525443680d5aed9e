//go:build linux || darwin

package fds

import (
	"runtime"
	"syscall"
	"testing"

	"golang.org/x/sys/unix"
)

// inheritable opens a pipe whose ends are not close-on-exec, as a
// launcher's descriptors would be.
func inheritable(t *testing.T) [2]int {
	t.Helper()
	var p [2]int
	syscall.ForkLock.Lock()
	err := syscall.Pipe(p[:])
	syscall.ForkLock.Unlock()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { syscall.Close(p[0]); syscall.Close(p[1]) })
	for _, fd := range p {
		if _, err := unix.FcntlInt(uintptr(fd), unix.F_SETFD, 0); err != nil {
			t.Fatal(err)
		}
	}
	return p
}

func cloexec(t *testing.T, fd int) bool {
	t.Helper()
	flags, err := unix.FcntlInt(uintptr(fd), unix.F_GETFD, 0)
	if err != nil {
		t.Fatal(err)
	}
	return flags&unix.FD_CLOEXEC != 0
}

func TestCloseOnExec(t *testing.T) {
	p := inheritable(t)
	if cloexec(t, p[0]) || cloexec(t, p[1]) {
		t.Fatal("the test pipe is close-on-exec already")
	}
	if err := CloseOnExec(); err != nil {
		t.Fatal(err)
	}
	if !cloexec(t, p[0]) || !cloexec(t, p[1]) {
		t.Fatal("an inherited descriptor is still inheritable")
	}
	for fd := 0; fd <= 2; fd++ {
		if cloexec(t, fd) {
			t.Fatalf("standard descriptor %d became close-on-exec", fd)
		}
	}
}

// TestMarkDir is the path for systems without close_range (macOS, and
// Linux before 5.11).
func TestMarkDir(t *testing.T) {
	p := inheritable(t)
	dir := "/dev/fd"
	if runtime.GOOS == "linux" {
		dir = "/proc/self/fd"
	}
	if err := markDir(dir); err != nil {
		t.Fatal(err)
	}
	if !cloexec(t, p[0]) || !cloexec(t, p[1]) {
		t.Fatal("an inherited descriptor is still inheritable")
	}
}
