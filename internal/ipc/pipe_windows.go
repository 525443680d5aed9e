package ipc

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"sync"
	"time"
	"unsafe"

	"github.com/Microsoft/go-winio"
	"golang.org/x/sys/windows"
)

// address names the pipe after the user's SID, so that each user has their
// own, and after the runtime directory, so that instances with their own
// HOSTLINK_HOME do not collide.
func address(runtimeDir string) (string, error) {
	sid, err := selfSID()
	if err != nil {
		return "", err
	}
	h := sha256.Sum256([]byte(strings.ToLower(filepath.Clean(runtimeDir))))
	return `\\.\pipe\hostlink-` + sid + "-" + hex.EncodeToString(h[:4]), nil
}

func selfSID() (string, error) {
	tu, err := windows.GetCurrentProcessToken().GetTokenUser()
	if err != nil {
		return "", fmt.Errorf("current user: %w", err)
	}
	return tu.User.Sid.String(), nil
}

// listen creates the pipe's first instance with FILE_FLAG_FIRST_PIPE_INSTANCE,
// so that a pipe of the same name held by anyone else, a squatter or a live
// daemon, makes start-up fail instead of hostlink serving through it. Every
// instance rejects remote clients, and the protected DACL admits only this
// user and SYSTEM.
func listen(name string) (net.Listener, error) {
	sid, err := selfSID()
	if err != nil {
		return nil, err
	}
	// The owner is set to the user, not left to the token's default
	// (Administrators for an elevated process), so that a client can
	// check that the pipe is this user's (checkServer).
	sd, err := windows.SecurityDescriptorFromString("O:" + sid + "D:P(A;;GA;;;" + sid + ")(A;;GA;;;SY)")
	if err != nil {
		return nil, err
	}
	l := &pipeListener{name: name, sd: sd}
	// FILE_FLAG_FIRST_PIPE_INSTANCE is what closes the race on Windows;
	// asking first also covers Wine, which ignores that flag.
	if pipeExists(name) {
		return nil, fmt.Errorf("%w, or another program holds the pipe %s; not starting", ErrAlreadyRunning, name)
	}
	l.next, err = l.instance(true)
	if err != nil {
		return nil, fmt.Errorf("%w, or another program holds the pipe %s (%v); not starting", ErrAlreadyRunning, name, err)
	}
	return l, nil
}

var procWaitNamedPipeW = windows.NewLazySystemDLL("kernel32.dll").NewProc("WaitNamedPipeW")

// pipeExists reports whether any instance of the pipe exists, without
// connecting to it (which would show our identity to whoever holds it).
func pipeExists(name string) bool {
	p, err := windows.UTF16PtrFromString(name)
	if err != nil {
		return false
	}
	r, _, err := procWaitNamedPipeW.Call(uintptr(unsafe.Pointer(p)), 1)
	return r != 0 || !errors.Is(err, windows.ERROR_FILE_NOT_FOUND)
}

// pipeListener serves a named pipe. It is hostlink's own rather than
// go-winio's ListenPipe because that holds the name with a first instance
// that accepts no clients, which Wine does not honour (clients connect to
// it and hang), so the pipe could not be tested there. Accept must not be
// called concurrently.
type pipeListener struct {
	name string
	sd   *windows.SECURITY_DESCRIPTOR

	mu        sync.Mutex
	next      windows.Handle // the instance the next client connects to
	accepting bool           // Accept is waiting on next
	closed    bool
}

func (l *pipeListener) instance(first bool) (windows.Handle, error) {
	name, err := windows.UTF16PtrFromString(l.name)
	if err != nil {
		return 0, err
	}
	flags := uint32(windows.PIPE_ACCESS_DUPLEX | windows.FILE_FLAG_OVERLAPPED)
	if first {
		flags |= windows.FILE_FLAG_FIRST_PIPE_INSTANCE
	}
	mode := uint32(windows.PIPE_TYPE_BYTE | windows.PIPE_READMODE_BYTE | windows.PIPE_WAIT | windows.PIPE_REJECT_REMOTE_CLIENTS)
	sa := &windows.SecurityAttributes{SecurityDescriptor: l.sd}
	sa.Length = uint32(unsafe.Sizeof(*sa))
	return windows.CreateNamedPipe(name, flags, mode, windows.PIPE_UNLIMITED_INSTANCES, 64<<10, 64<<10, 0, sa)
}

func (l *pipeListener) Accept() (net.Conn, error) {
	for {
		c, err := l.accept()
		if c != nil || err != nil {
			return c, err
		}
	}
}

// accept waits for one client. It returns neither a connection nor an
// error when the client went away before it could be served: the instance
// is reset for the next one, and the daemon must not stop over it.
func (l *pipeListener) accept() (net.Conn, error) {
	l.mu.Lock()
	if l.closed {
		l.mu.Unlock()
		return nil, net.ErrClosed
	}
	if l.next == 0 {
		// The last instance could not be made (out of handles, say): try
		// again now; the caller backs off on the error.
		next, err := l.instance(false)
		if err != nil {
			l.mu.Unlock()
			return nil, err
		}
		l.next = next
	}
	h := l.next
	l.accepting = true
	l.mu.Unlock()

	err := connectPipe(h)

	l.mu.Lock()
	defer l.mu.Unlock()
	l.accepting = false
	if l.closed {
		windows.CloseHandle(h)
		return nil, net.ErrClosed
	}
	if err != nil {
		windows.DisconnectNamedPipe(h)
		return nil, nil
	}
	// The connected instance is the client's now; the next one is made
	// here, or by the next accept if that fails.
	l.next = 0
	if next, err := l.instance(false); err == nil {
		l.next = next
	}
	// os.NewFile puts an overlapped handle on the runtime's poller, which
	// gives the connection deadlines.
	return &pipeConn{File: os.NewFile(uintptr(h), l.name), h: h}, nil
}

// connectPipe waits for a client to connect to the instance h.
func connectPipe(h windows.Handle) error {
	ev, err := windows.CreateEvent(nil, 1, 0, nil)
	if err != nil {
		return err
	}
	defer windows.CloseHandle(ev)
	ov := windows.Overlapped{HEvent: ev}
	err = windows.ConnectNamedPipe(h, &ov)
	if errors.Is(err, windows.ERROR_IO_PENDING) {
		var n uint32
		err = windows.GetOverlappedResult(h, &ov, &n, true)
	}
	if errors.Is(err, windows.ERROR_PIPE_CONNECTED) {
		err = nil
	}
	return err
}

func (l *pipeListener) Close() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return nil
	}
	l.closed = true
	if l.accepting {
		// Accept returns and closes the handle.
		return windows.CancelIoEx(l.next, nil)
	}
	if l.next == 0 {
		return nil
	}
	return windows.CloseHandle(l.next)
}

func (l *pipeListener) Addr() net.Addr { return pipeAddr(l.name) }

type pipeAddr string

func (pipeAddr) Network() string  { return "pipe" }
func (a pipeAddr) String() string { return string(a) }

// pipeConn is the server end of one client's connection.
type pipeConn struct {
	*os.File
	h windows.Handle
}

func (c *pipeConn) LocalAddr() net.Addr  { return pipeAddr(c.Name()) }
func (c *pipeConn) RemoteAddr() net.Addr { return pipeAddr(c.Name()) }

func dial(ctx context.Context, name string) (net.Conn, error) {
	c, err := dialUnchecked(ctx, name)
	if err != nil {
		return nil, err
	}
	if err := checkServer(c, name); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

func dialUnchecked(ctx context.Context, name string) (net.Conn, error) {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	c, err := winio.DialPipeAccessImpLevel(ctx, name, windows.GENERIC_READ|windows.GENERIC_WRITE, winio.PipeImpLevelIdentification)
	if errors.Is(err, windows.ERROR_FILE_NOT_FOUND) {
		return nil, fmt.Errorf("%w; no daemon at %s", ErrNotRunning, name)
	}
	return c, err
}

// checkServer makes sure, before anything is sent, that the pipe is this
// user's: the process serving it (GetNamedPipeServerProcessId) runs as
// this user, and the pipe object is owned by this user. A pipe of the
// same name held by another user fails both.
func checkServer(c net.Conn, name string) error {
	self, err := selfSID()
	if err != nil {
		return err
	}
	server, err := measureServer(c)
	if err != nil {
		return fmt.Errorf("%w at %s: its identity cannot be measured (%v); nothing was sent", ErrImpostor, name, err)
	}
	if server.SID != self {
		return fmt.Errorf("%w: %s is served by %s (pid %d), not by your user %s; nothing was sent", ErrImpostor, name, server.SID, server.PID, self)
	}
	if owner := server.owner; owner != self {
		return fmt.Errorf("%w: %s is owned by %s, not by your user %s; nothing was sent", ErrImpostor, name, owner, self)
	}
	return nil
}

// serverIdentity is what a client measures of a pipe's server.
type serverIdentity struct {
	Peer
	owner string // SID owning the pipe object
}

// measureServer reads the server's PID from the pipe, the user of that
// process from its token, and the pipe's owner from its security
// descriptor.
func measureServer(c net.Conn) (serverIdentity, error) {
	id := serverIdentity{Peer: Peer{UID: -1}}
	fd, ok := c.(interface{ Fd() uintptr })
	if !ok {
		return id, fmt.Errorf("not a pipe: %T", c)
	}
	h := windows.Handle(fd.Fd())
	var pid uint32
	if err := windows.GetNamedPipeServerProcessId(h, &pid); err != nil {
		return id, fmt.Errorf("GetNamedPipeServerProcessId: %w", err)
	}
	id.PID = int(pid)
	sid, err := processSID(pid)
	if err != nil {
		return id, err
	}
	id.SID = sid
	sd, err := windows.GetSecurityInfo(h, windows.SE_KERNEL_OBJECT, windows.OWNER_SECURITY_INFORMATION)
	if err != nil {
		return id, fmt.Errorf("pipe owner: %w", err)
	}
	owner, _, err := sd.Owner()
	if err != nil || owner == nil {
		return id, fmt.Errorf("pipe owner: %v", err)
	}
	id.owner = owner.String()
	return id, nil
}

// processSID returns the user SID of process pid.
func processSID(pid uint32) (string, error) {
	p, err := windows.OpenProcess(windows.PROCESS_QUERY_LIMITED_INFORMATION, false, pid)
	if err != nil {
		return "", fmt.Errorf("opening server process %d: %w", pid, err)
	}
	defer windows.CloseHandle(p)
	var tok windows.Token
	if err := windows.OpenProcessToken(p, windows.TOKEN_QUERY, &tok); err != nil {
		return "", fmt.Errorf("server process %d token: %w", pid, err)
	}
	defer tok.Close()
	tu, err := tok.GetTokenUser()
	if err != nil {
		return "", fmt.Errorf("server process %d user: %w", pid, err)
	}
	return tu.User.Sid.String(), nil
}

// checkPeer accepts only hostlink's own user.
func checkPeer(p Peer) error {
	self, err := selfSID()
	if err != nil {
		return err
	}
	if p.SID != self {
		return fmt.Errorf("peer %s is not hostlink's user %s", p.SID, self)
	}
	return nil
}

var (
	advapi32                       = windows.NewLazySystemDLL("advapi32.dll")
	procImpersonateNamedPipeClient = advapi32.NewProc("ImpersonateNamedPipeClient")
)

// measurePeer reads the client's PID from the pipe and its user SID from
// its token, obtained by impersonating it at Identification level (which
// Dial grants; go-winio's default, Anonymous, would hide the token).
func measurePeer(c net.Conn) (Peer, error) {
	p := Peer{UID: -1}
	pc, ok := c.(*pipeConn)
	if !ok {
		return p, fmt.Errorf("not a pipe: %T", c)
	}
	h := pc.h
	var pid uint32
	if err := windows.GetNamedPipeClientProcessId(h, &pid); err != nil {
		return p, fmt.Errorf("GetNamedPipeClientProcessId: %w", err)
	}
	p.PID = int(pid)
	sid, err := clientSID(h)
	if err != nil {
		return p, err
	}
	p.SID = sid
	return p, nil
}

// clientSID impersonates the pipe's client on a thread of its own. If the
// thread cannot revert to hostlink's identity, it is left locked so that
// the runtime discards it rather than run other goroutines as the client.
func clientSID(h windows.Handle) (string, error) {
	type result struct {
		sid string
		err error
	}
	ch := make(chan result, 1)
	go func() {
		runtime.LockOSThread()
		sid, err := impersonatedSID(h)
		if rerr := windows.RevertToSelf(); rerr != nil {
			ch <- result{err: fmt.Errorf("RevertToSelf: %w", rerr)}
			return // the thread stays locked and dies with the goroutine
		}
		runtime.UnlockOSThread()
		ch <- result{sid, err}
	}()
	r := <-ch
	return r.sid, r.err
}

func impersonatedSID(h windows.Handle) (string, error) {
	if r, _, err := procImpersonateNamedPipeClient.Call(uintptr(h)); r == 0 {
		return "", fmt.Errorf("ImpersonateNamedPipeClient: %w", err)
	}
	var tok windows.Token
	if err := windows.OpenThreadToken(windows.CurrentThread(), windows.TOKEN_QUERY, true, &tok); err != nil {
		return "", fmt.Errorf("OpenThreadToken: %w", err)
	}
	defer tok.Close()
	tu, err := tok.GetTokenUser()
	if err != nil {
		return "", fmt.Errorf("client token user: %w", err)
	}
	return tu.User.Sid.String(), nil
}
