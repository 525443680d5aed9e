//go:build linux || darwin

package ipc

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"os"
	"path/filepath"
	"runtime"
	"syscall"
	"time"

	"golang.org/x/sys/unix"

	"github.com/hostlink/hostlink/internal/private"
)

// sockName is the socket's name in the runtime directory.
const sockName = "hostlink.sock"

// maxSunPath is sizeof(sockaddr_un.sun_path), which holds the path and its
// terminating NUL.
var maxSunPath = map[string]int{"linux": 108, "darwin": 104}

func address(runtimeDir string) (string, error) {
	p := filepath.Join(runtimeDir, sockName)
	return p, checkPathLen(p)
}

func checkPathLen(p string) error {
	if limit := maxSunPath[runtime.GOOS]; len(p)+1 > limit {
		return fmt.Errorf("socket path %s is %d bytes, over the %s limit of %d; "+
			"point XDG_RUNTIME_DIR or HOSTLINK_HOME at a shorter directory", p, len(p), runtime.GOOS, limit-1)
	}
	return nil
}

// listen serves the socket p from its runtime directory, which must be
// the user's own and out of anyone else's reach (private.CheckDir): in a
// directory another user owns or can replace, they could take the
// socket's place, or plant links for hostlink to follow.
func listen(p string) (net.Listener, error) {
	dir := filepath.Dir(p)
	if err := private.MkdirAll(dir); err != nil {
		return nil, runtimeDirError(err)
	}
	if err := private.CheckDir(dir); err != nil {
		return nil, runtimeDirError(err)
	}
	return listenAt(p)
}

func runtimeDirError(err error) error {
	return fmt.Errorf("runtime directory: %w; hostlink serves its control socket only from a directory that is yours alone "+
		"(point XDG_RUNTIME_DIR or HOSTLINK_HOME at one)", err)
}

// listenAt listens on p in an existing directory. Tests use it directly to
// place a socket where another user may reach it.
func listenAt(p string) (net.Listener, error) {
	if err := checkPathLen(p); err != nil {
		return nil, err
	}
	// The lock is held for as long as the socket is served, so two daemons
	// starting at the same moment cannot both judge the socket stale. It is
	// opened without following a link, and must be the user's own file.
	lock, err := private.OpenFile(p+".lock", os.O_RDWR|os.O_CREATE)
	if err != nil {
		return nil, fmt.Errorf("control socket lock: %w", err)
	}
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_EX|unix.LOCK_NB); err != nil {
		lock.Close()
		if errors.Is(err, unix.EWOULDBLOCK) {
			return nil, fmt.Errorf("%w (it holds %s)", ErrAlreadyRunning, p+".lock")
		}
		return nil, fmt.Errorf("control socket lock: %w", err)
	}
	ln, err := listenLocked(p)
	if err != nil {
		lock.Close()
		return nil, err
	}
	return &lockedListener{Listener: ln, lock: lock}, nil
}

func listenLocked(p string) (net.Listener, error) {
	if err := removeStale(p); err != nil {
		return nil, err
	}
	ln, err := net.Listen("unix", p)
	if err != nil {
		return nil, fmt.Errorf("control socket: %w", err)
	}
	// The directory is the user's alone (listen checked it), so nobody can
	// swap the socket for a link between these calls; 0600 keeps the
	// socket private however the directory's mode changes later.
	if err := os.Chmod(p, 0o600); err != nil {
		ln.Close()
		return nil, fmt.Errorf("control socket: %w", err)
	}
	return ln, nil
}

// lockedListener releases the daemon's lock when it stops listening.
type lockedListener struct {
	net.Listener
	lock *os.File
}

func (l *lockedListener) Close() error {
	err := l.Listener.Close()
	l.lock.Close()
	return err
}

// removeStale removes a socket at p left by a daemon that died, and only
// that: a live daemon, a file that is not a socket and a socket of another
// user are reasons to refuse to start.
func removeStale(p string) error {
	fi, err := os.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	if fi.Mode().Type() != fs.ModeSocket {
		return fmt.Errorf("%s exists and is not a socket; not removing it", p)
	}
	if st, ok := fi.Sys().(*syscall.Stat_t); !ok || int(st.Uid) != os.Getuid() {
		return fmt.Errorf("%s belongs to another user; not removing it", p)
	}
	c, err := net.DialTimeout("unix", p, 2*time.Second)
	if err == nil {
		c.Close()
		return fmt.Errorf("%w (it answers at %s)", ErrAlreadyRunning, p)
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		return fmt.Errorf("%s exists and its state is unclear (%v); not removing it", p, err)
	}
	if err := os.Remove(p); err != nil {
		return fmt.Errorf("removing stale socket: %w", err)
	}
	return nil
}

func dial(ctx context.Context, p string) (net.Conn, error) {
	c, err := dialUnchecked(ctx, p)
	if err != nil {
		return nil, err
	}
	if err := checkServer(c, p); err != nil {
		c.Close()
		return nil, err
	}
	return c, nil
}

// dialUnchecked connects to p. A full listen queue (EAGAIN: the daemon is
// accepting, but a flood of connections is ahead of ours) is waited out
// until ctx is done, as a blocking connect would.
func dialUnchecked(ctx context.Context, p string) (net.Conn, error) {
	var d net.Dialer
	wait := 5 * time.Millisecond
	for {
		c, err := d.DialContext(ctx, "unix", p)
		switch {
		case errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED):
			return nil, fmt.Errorf("%w; no daemon at %s", ErrNotRunning, p)
		case !errors.Is(err, syscall.EAGAIN):
			return c, err
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("%w (the daemon's queue of connections stayed full)", err)
		case <-time.After(wait):
		}
		wait = min(2*wait, 200*time.Millisecond)
	}
}

// checkServer makes sure, before anything is sent, that the process
// serving p runs as this user: the kernel records the listener's
// credentials (SO_PEERCRED, LOCAL_PEERCRED on the client's end), which
// the listener cannot choose.
func checkServer(c net.Conn, p string) error {
	server, err := measurePeer(c)
	if err != nil {
		return fmt.Errorf("%w at %s: its identity cannot be measured (%v); nothing was sent", ErrImpostor, p, err)
	}
	if server.UID != os.Getuid() {
		return fmt.Errorf("%w: %s is served by uid %d (pid %d), not by your uid %d; nothing was sent", ErrImpostor, p, server.UID, server.PID, os.Getuid())
	}
	return nil
}

// checkPeer accepts only hostlink's own user.
func checkPeer(p Peer) error {
	if p.UID != os.Getuid() {
		return fmt.Errorf("peer uid %d is not hostlink's uid %d", p.UID, os.Getuid())
	}
	return nil
}

// sockopt runs f on c's socket descriptor.
func sockopt(c net.Conn, f func(fd int) error) error {
	uc, ok := c.(*net.UnixConn)
	if !ok {
		return fmt.Errorf("not a Unix socket: %T", c)
	}
	raw, err := uc.SyscallConn()
	if err != nil {
		return err
	}
	var ferr error
	if err := raw.Control(func(fd uintptr) { ferr = f(int(fd)) }); err != nil {
		return err
	}
	return ferr
}
