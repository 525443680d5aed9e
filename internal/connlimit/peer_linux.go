package connlimit

import (
	"encoding/binary"
	"net"

	"golang.org/x/sys/unix"
)

// inet_diag (linux/inet_diag.h): the request and reply layouts, from the
// kernel's UAPI. golang.org/x/sys/unix has the constants but not these.
const (
	nlmsgHdrLen     = 16
	inetDiagReqLen  = 56 // struct inet_diag_req_v2
	inetDiagMsgLen  = 72 // struct inet_diag_msg
	inetDiagUIDOffs = 64 // idiag_uid within inet_diag_msg
)

// peerUID asks the kernel (sock_diag) for the owner of the socket at the
// other end of a loopback TCP connection: the socket whose local address
// is c's remote one and whose remote address is c's local one. It is an
// exact lookup, not a dump, so its cost does not grow with the number of
// sockets open (a flood is many).
func peerUID(c net.Conn) (uint32, bool) {
	remote, ok1 := c.RemoteAddr().(*net.TCPAddr)
	local, ok2 := c.LocalAddr().(*net.TCPAddr)
	if !ok1 || !ok2 || !remote.IP.IsLoopback() {
		return 0, false
	}
	req, ok := diagRequest(remote, local)
	if !ok {
		return 0, false
	}
	fd, err := unix.Socket(unix.AF_NETLINK, unix.SOCK_DGRAM|unix.SOCK_CLOEXEC, unix.NETLINK_SOCK_DIAG)
	if err != nil {
		return 0, false
	}
	defer unix.Close(fd)
	if err := unix.Sendto(fd, req, 0, &unix.SockaddrNetlink{Family: unix.AF_NETLINK}); err != nil {
		return 0, false
	}
	buf := make([]byte, 1024)
	n, _, err := unix.Recvfrom(fd, buf, 0)
	if err != nil || n < nlmsgHdrLen+inetDiagMsgLen {
		return 0, false // includes NLMSG_ERROR: no such socket
	}
	if binary.NativeEndian.Uint16(buf[4:6]) != unix.SOCK_DIAG_BY_FAMILY {
		return 0, false
	}
	return binary.NativeEndian.Uint32(buf[nlmsgHdrLen+inetDiagUIDOffs:]), true
}

// diagRequest is a netlink message asking for the TCP socket bound to
// src and connected to dst.
func diagRequest(src, dst *net.TCPAddr) ([]byte, bool) {
	family := uint8(unix.AF_INET6)
	s, d := src.IP.To16(), dst.IP.To16()
	if s4, d4 := src.IP.To4(), dst.IP.To4(); s4 != nil && d4 != nil {
		family, s, d = unix.AF_INET, s4, d4
	}
	if s == nil || d == nil {
		return nil, false
	}
	b := make([]byte, nlmsgHdrLen+inetDiagReqLen)
	ne := binary.NativeEndian
	ne.PutUint32(b[0:], uint32(len(b)))
	ne.PutUint16(b[4:], unix.SOCK_DIAG_BY_FAMILY)
	ne.PutUint16(b[6:], unix.NLM_F_REQUEST) // no NLM_F_DUMP: one socket, by hash
	r := b[nlmsgHdrLen:]
	r[0], r[1] = family, unix.IPPROTO_TCP
	ne.PutUint32(r[4:], 0xffffffff) // idiag_states: any
	id := r[8:]                     // struct inet_diag_sockid
	binary.BigEndian.PutUint16(id[0:], uint16(src.Port))
	binary.BigEndian.PutUint16(id[2:], uint16(dst.Port))
	copy(id[4:20], s)
	copy(id[20:36], d)
	ne.PutUint32(id[40:], 0xffffffff) // INET_DIAG_NOCOOKIE
	ne.PutUint32(id[44:], 0xffffffff)
	return b, true
}
