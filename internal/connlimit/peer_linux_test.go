package connlimit

import (
	"bufio"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"

	"github.com/hostlink/hostlink/internal/tstest"
)

// dialEnv makes this test binary a client that connects to the address
// it names, says so on stdout, and holds the connection until stdin ends.
const dialEnv = "HOSTLINK_CONNLIMIT_TEST_DIAL"

func TestMain(m *testing.M) {
	if addr := os.Getenv(dialEnv); addr != "" {
		c, err := net.Dial("tcp", addr)
		if err != nil {
			fmt.Println("dial:", err)
			os.Exit(1)
		}
		fmt.Println(c.LocalAddr())
		bufio.NewReader(os.Stdin).ReadString('\n')
		os.Exit(0)
	}
	os.Exit(m.Run())
}

// accept returns the server end of a connection from a client running as
// cred (nil: this process's user).
func acceptFrom(t *testing.T, network, addr string, cred *syscall.Credential) net.Conn {
	t.Helper()
	ln, err := net.Listen(network, addr)
	if err != nil {
		tstest.Missing(t, "no "+addr+": "+err.Error())
	}
	t.Cleanup(func() { ln.Close() })
	exe, _ := os.Executable()
	if cred != nil {
		// The build directory is private to this user: the other one runs
		// a copy.
		dir, err := os.MkdirTemp("", "connlimit")
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { os.RemoveAll(dir) })
		os.Chmod(dir, 0o755)
		b, err := os.ReadFile(exe)
		if err != nil {
			t.Fatal(err)
		}
		exe = filepath.Join(dir, "client.test")
		if err := os.WriteFile(exe, b, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	cmd := exec.Command(exe, "-test.run=^$")
	cmd.Env = append(os.Environ(), dialEnv+"="+ln.Addr().String())
	cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	stdin, _ := cmd.StdinPipe()
	stdout, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { stdin.Close(); cmd.Wait() })
	if line, err := bufio.NewReader(stdout).ReadString('\n'); err != nil {
		t.Fatalf("client: %q %v", line, err)
	}
	c, err := ln.Accept()
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

// TestLocalPeerIsTheUser: a loopback connection's peer is the user owning
// the other end, measured by the kernel, for IPv4 and IPv6, and another
// user's connection is another peer.
func TestLocalPeerIsTheUser(t *testing.T) {
	me := "uid " + strconv.Itoa(os.Getuid())
	for _, tt := range []struct{ network, addr string }{{"tcp4", "127.0.0.1:0"}, {"tcp6", "[::1]:0"}} {
		if got := LocalPeer(acceptFrom(t, tt.network, tt.addr, nil)); got != me {
			t.Errorf("%s: peer %q, want %q", tt.network, got, me)
		}
	}
	tstest.Root(t)
	u, err := user.Lookup("nobody")
	if err != nil {
		tstest.Missing(t, "no user nobody")
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	c := acceptFrom(t, "tcp4", "127.0.0.1:0", &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)})
	if got, want := LocalPeer(c), "uid "+u.Uid; got != want {
		t.Errorf("nobody's connection: peer %q, want %q", got, want)
	}
}
