package connlimit

import (
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
