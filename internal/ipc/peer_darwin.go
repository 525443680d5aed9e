package ipc

import (
	"fmt"
	"net"

	"golang.org/x/sys/unix"
)

// measurePeer reads the peer's credentials as the kernel recorded them at
// connect time (LOCAL_PEERCRED, as getpeereid does) and its PID
// (LOCAL_PEERPID, macOS 10.8 and later).
func measurePeer(c net.Conn) (Peer, error) {
	var p Peer
	err := sockopt(c, func(fd int) error {
		cred, err := unix.GetsockoptXucred(fd, unix.SOL_LOCAL, unix.LOCAL_PEERCRED)
		if err != nil {
			return fmt.Errorf("LOCAL_PEERCRED: %w", err)
		}
		p.UID = int(cred.Uid)
		// The PID is for the audit record only; the uid decides.
		if pid, err := unix.GetsockoptInt(fd, unix.SOL_LOCAL, unix.LOCAL_PEERPID); err == nil {
			p.PID = pid
		}
		return nil
	})
	return p, err
}
