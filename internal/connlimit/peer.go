package connlimit

import (
	"context"
	"net"
	"strconv"
)

// LocalPeer names a loopback connection's peer by the local user that
// owns its other end, where the OS lets that be measured (Linux: the
// kernel's socket table), else by its IP address (RemoteIP). Every local
// user connects from 127.0.0.1, so keyed by address the per-peer limit
// would put another user's flood and the user's own connections in one
// bucket, and the flood's churn would close the user's new connections
// before their first request was read.
func LocalPeer(c net.Conn) string {
	if uid, ok := peerUID(c); ok {
		return "uid " + strconv.FormatUint(uint64(uid), 10)
	}
	return RemoteIP(c)
}

// PeerUID is the local user owning the other end of the loopback
// connection a request came on (ctx as WithConn made it), measured now;
// measured is false where the OS does not tell (see peerUID) or ctx
// carries no connection.
func PeerUID(ctx context.Context) (uid uint32, measured bool) {
	c, ok := ctx.Value(ctxKey{}).(*Conn)
	if !ok {
		return 0, false
	}
	return peerUID(c.Conn)
}
