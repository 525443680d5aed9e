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

func listen(p string) (net.Listener, error) {
	if err := private.MkdirAll(filepath.Dir(p)); err != nil {
		return nil, fmt.Errorf("runtime directory: %w", err)
	}
	return listenAt(p)
}

// listenAt listens on p in an existing directory. Tests use it directly to
// place a socket where another user may reach it.
func listenAt(p string) (net.Listener, error) {
	if err := checkPathLen(p); err != nil {
		return nil, err
	}
	// The lock is held for as long as the socket is served, so two daemons
	// starting at the same moment cannot both judge the socket stale.
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
	// The directory is private already; 0600 keeps the socket so even if
	// the directory is not (XDG_RUNTIME_DIR set by someone else).
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
	var d net.Dialer
	c, err := d.DialContext(ctx, "unix", p)
	if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ECONNREFUSED) {
		return nil, fmt.Errorf("%w; no daemon at %s", ErrNotRunning, p)
	}
	return c, err
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
