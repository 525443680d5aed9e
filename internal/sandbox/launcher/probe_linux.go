package launcher

import (
	"os"

	"github.com/hostlink/hostlink/internal/sandboxapi"
	"golang.org/x/sys/unix"
)

// try attempts, from inside the sandbox, what it must deny, and returns
// the rules that did not hold. Its connections are made with bare
// sockets rather than package net, which the launcher leaves out (see
// the package documentation).
func (p *Probe) try() []string {
	var allowed []string
	if f, err := os.Create(join(p.OutsideDir, "x")); err == nil {
		f.Close()
		allowed = append(allowed, sandboxapi.RuleWrites)
	}
	if _, err := os.ReadFile(p.HiddenFile); err == nil {
		allowed = append(allowed, sandboxapi.RuleHiddenReads)
	}
	if _, err := os.ReadDir(p.HiddenDir); err == nil {
		allowed = append(allowed, sandboxapi.RuleHiddenListing)
	}
	if p.TCPPort != 0 {
		// Plain TCP, and Multipath TCP, which Landlock does not cover (a
		// kernel without it refuses the socket: nothing more to try).
		to := &unix.SockaddrInet4{Port: p.TCPPort, Addr: [4]byte{127, 0, 0, 1}}
		for _, proto := range []int{0, unix.IPPROTO_MPTCP} {
			if connects(unix.AF_INET, proto, to) {
				allowed = append(allowed, sandboxapi.RuleNetwork)
				break
			}
		}
	}
	if p.UnixSocket != "" && connects(unix.AF_UNIX, 0, &unix.SockaddrUnix{Name: p.UnixSocket}) {
		allowed = append(allowed, sandboxapi.RuleUnixSockets)
	}
	if err := unix.Kill(p.Pid, 0); err == nil {
		allowed = append(allowed, sandboxapi.RuleSignals)
	}
	return allowed
}

// connects reports whether a stream socket of family and proto connects
// to addr within 5 seconds.
func connects(family, proto int, addr unix.Sockaddr) bool {
	fd, err := unix.Socket(family, unix.SOCK_STREAM|unix.SOCK_CLOEXEC, proto)
	if err != nil {
		return false
	}
	defer unix.Close(fd)
	// A blocking connect gives up after the send timeout.
	unix.SetsockoptTimeval(fd, unix.SOL_SOCKET, unix.SO_SNDTIMEO, &unix.Timeval{Sec: 5})
	return unix.Connect(fd, addr) == nil
}
