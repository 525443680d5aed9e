//go:build linux || darwin

package connlimit

import (
	"net"
	"os"
	"syscall"
	"testing"
	"time"
)

// TestAcceptOutlastsEMFILE runs out of descriptors for real: with the
// process's RLIMIT_NOFILE lowered to what is open, a connection the kernel
// has queued cannot be accepted (EMFILE). Accept must wait that out, not
// fail, and return the connection once a descriptor is free.
func TestAcceptOutlastsEMFILE(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	client, err := net.Dial("tcp", ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer client.Close()

	var old syscall.Rlimit
	if err := syscall.Getrlimit(syscall.RLIMIT_NOFILE, &old); err != nil {
		t.Fatal(err)
	}
	// Fill the descriptor table up to a low limit, keeping one file to
	// free later.
	var spare []*os.File
	lim := old
	lim.Cur = uint64(openFDs(t) + 8)
	if err := syscall.Setrlimit(syscall.RLIMIT_NOFILE, &lim); err != nil {
		t.Fatal(err)
	}
	defer syscall.Setrlimit(syscall.RLIMIT_NOFILE, &old)
	for {
		f, err := os.Open(os.DevNull)
		if err != nil {
			break
		}
		spare = append(spare, f)
	}
	defer func() {
		for _, f := range spare {
			f.Close()
		}
	}()
	if len(spare) == 0 {
		t.Fatal("no descriptor could be opened below the limit")
	}
	if _, err := os.Open(os.DevNull); err == nil {
		t.Fatal("the descriptor table is not full")
	}

	accepted := make(chan error, 1)
	go func() {
		c, err := Accept(ln)
		if c != nil {
			c.Close()
		}
		accepted <- err
	}()
	// Accept is failing with EMFILE and backing off now; give it one
	// descriptor. (A sleep would not prove more: Accept cannot succeed
	// before this.)
	select {
	case err := <-accepted:
		t.Fatalf("Accept returned with the table full: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	spare[len(spare)-1].Close()
	spare = spare[:len(spare)-1]
	select {
	case err := <-accepted:
		if err != nil {
			t.Fatalf("Accept: %v", err)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("Accept did not recover once a descriptor was free")
	}
}

func openFDs(t *testing.T) int {
	t.Helper()
	dir := "/dev/fd"
	if _, err := os.Stat("/proc/self/fd"); err == nil {
		dir = "/proc/self/fd"
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	return len(entries)
}
