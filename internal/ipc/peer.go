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
	// Child: the process is one hostlink started, or a descendant of one
	// (procs.Descendant): it acts for an agent, not for the user.
	Child bool
}

func (p Peer) String() string {
	s := fmt.Sprintf("uid %d pid %d", p.UID, p.PID)
	if p.SID != "" {
		s = fmt.Sprintf("sid %s pid %d", p.SID, p.PID)
	}
	if p.Child {
		s += " (started by hostlink)"
	}
	return s
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
