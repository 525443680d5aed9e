package connlimit

import (
	"net"
	"net/http"
)

// Listener is a net.Listener whose connections a Tracker admits, for an
// http.Server: set its ConnState to Listener.ConnState and its
// ConnContext to WithConn.
type Listener struct {
	net.Listener
	*Tracker
	peer func(net.Conn) string
}

// Listen wraps ln. peer names a connection's peer for the per-peer limit;
// nil means the remote IP address.
func Listen(ln net.Listener, lim Limits, peer func(net.Conn) string) *Listener {
	if peer == nil {
		peer = RemoteIP
	}
	return &Listener{Listener: ln, Tracker: NewTracker(lim), peer: peer}
}

// Accept returns the next admitted connection (a *Conn); connections for
// which no room can be made are closed at once.
func (l *Listener) Accept() (net.Conn, error) {
	for {
		c, err := Accept(l.Listener)
		if err != nil {
			return nil, err
		}
		if tc := l.Admit(c, l.peer(c), false); tc != nil {
			return tc, nil
		}
		c.Close()
	}
}

// ConnState follows net/http's view of each connection: a new or idle
// connection can be closed to make room before a busy one.
func (l *Listener) ConnState(c net.Conn, s http.ConnState) {
	tc, ok := c.(*Conn)
	if !ok {
		return
	}
	switch s {
	case http.StateActive:
		tc.SetBusy(true)
	case http.StateIdle:
		tc.SetBusy(false)
	case http.StateHijacked, http.StateClosed:
		// The server closes the connection (through Conn.Close), or the
		// handler owns it now and keeps its slot until it closes it.
	}
}

// RemoteIP is the IP address of c's remote end, or its whole address.
func RemoteIP(c net.Conn) string {
	a := c.RemoteAddr()
	if ta, ok := a.(*net.TCPAddr); ok {
		return ta.IP.String()
	}
	return a.String()
}
