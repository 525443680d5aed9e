package ipc

import (
	"fmt"
	"net"

	"golang.org/x/sys/unix"
)

// measurePeer reads the peer's credentials as the kernel recorded them at
// connect time (SO_PEERCRED); the peer cannot choose them.
func measurePeer(c net.Conn) (Peer, error) {
	var cred *unix.Ucred
	err := sockopt(c, func(fd int) (err error) {
		cred, err = unix.GetsockoptUcred(fd, unix.SOL_SOCKET, unix.SO_PEERCRED)
		return err
	})
	if err != nil {
		return Peer{}, fmt.Errorf("SO_PEERCRED: %w", err)
	}
	return Peer{UID: int(cred.Uid), PID: int(cred.Pid)}, nil
}
