package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/desktop/xvfbtest"
	"github.com/hostlink/hostlink/internal/tstest"
)

// TestCompanionNetworkNamespace is TestCompanionTwoProcesses with the
// runtime in its own network namespace, as in a container: it listens on
// its namespace's interface (container_interface), and the companion in
// the host namespace reaches it only through a forwarder on the host's
// loopback, as Docker's published port does. Needs root and ip(8).
func TestCompanionNetworkNamespace(t *testing.T) {
	t.Parallel()
	tstest.Root(t) // to create a network namespace
	ipTool := xvfbtest.Need(t, "ip")
	x := xvfbtest.Start(t, 640, 480)
	bin := build(t)

	id := fmt.Sprintf("%d", os.Getpid()%10000)
	ns, host, inner := "hlc"+id, "hlch"+id, "hlcn"+id
	ip := func(args ...string) {
		t.Helper()
		if out, err := exec.Command(ipTool, args...).CombinedOutput(); err != nil {
			t.Fatalf("ip %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	if out, err := exec.Command(ipTool, "netns", "add", ns).CombinedOutput(); err != nil {
		if strings.Contains(string(out), "Operation not permitted") {
			// Root without CAP_SYS_ADMIN (an unprivileged container).
			tstest.Missing(t, "no permission to create a network namespace: "+string(out))
		}
		t.Fatalf("ip netns add: %v\n%s", err, out)
	}
	t.Cleanup(func() { exec.Command(ipTool, "netns", "del", ns).Run() })
	ip("link", "add", host, "type", "veth", "peer", "name", inner)
	t.Cleanup(func() { exec.Command(ipTool, "link", "del", host).Run() })
	ip("link", "set", inner, "netns", ns)
	ip("addr", "add", "10.231.77.1/30", "dev", host)
	ip("link", "set", host, "up")
	ip("netns", "exec", ns, ipTool, "addr", "add", "10.231.77.2/30", "dev", inner)
	ip("netns", "exec", ns, ipTool, "link", "set", inner, "up")
	ip("netns", "exec", ns, ipTool, "link", "set", "lo", "up")

	// Every runtime command runs inside the namespace.
	wrapper := filepath.Join(t.TempDir(), "hostlink-in-ns")
	script := fmt.Sprintf("#!/bin/sh\nexec %s netns exec %s %s \"$@\"\n", ipTool, ns, bin)
	if err := os.WriteFile(wrapper, []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}

	// The forwarder: host loopback → the namespace's interface.
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				up, err := net.Dial("tcp", "10.231.77.2:7718")
				if err != nil {
					return
				}
				defer up.Close()
				go io.Copy(up, c)
				io.Copy(c, up)
			}()
		}
	}()
	companionScenario(t, x, wrapper, bin, "listen = \"0.0.0.0:7718\"\ncontainer_interface = true\n", l.Addr().String())
}
