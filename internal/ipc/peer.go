package ipc

import (
	"fmt"
	"net"
)

// Peer is the measured identity of the process at the other end of a
// connection.
type Peer struct {
	UID int    // Unix user ID; -1 on Windows
	PID int    // process ID; 0 when the OS does not say
	SID string // Windows user SID; "" on Unix
}

func (p Peer) String() string {
	if p.SID != "" {
		return fmt.Sprintf("sid %s pid %d", p.SID, p.PID)
	}
	return fmt.Sprintf("uid %d pid %d", p.UID, p.PID)
}

// user names the peer's user without its process: the source refusals
// are counted under.
func (p Peer) user() string {
	if p.SID != "" {
		return "sid " + p.SID
	}
	return fmt.Sprintf("uid %d", p.UID)
}

// measureFunc measures the peer of an accepted connection. Server holds
// one as a field so that a test can make measuring fail.
type measureFunc func(net.Conn) (Peer, error)
