package ipc

import (
	"context"
	"errors"
	"net"
)

// ErrAlreadyRunning is wrapped by Listen's error when another daemon
// answers at the address.
var ErrAlreadyRunning = errors.New("another hostlink daemon is already running")

// ErrImpostor is wrapped by Dial's error when the process serving the
// address is not this user's: another user took the channel's place.
// Nothing has been sent to it.
var ErrImpostor = errors.New("the control channel is not served by your hostlink")

// ErrNotRunning is wrapped by Dial's error when nothing serves the address.
var ErrNotRunning = errors.New("the hostlink daemon is not running (start it with `hostlink serve`)")

// Address returns the control channel's address for a runtime directory
// (paths.Dirs.Runtime): a socket path on Unix, a pipe name on Windows.
func Address(runtimeDir string) (string, error) { return address(runtimeDir) }

// Listen creates the endpoint at addr, private to the current user. It
// refuses to start when another daemon answers there, and on Unix replaces
// a socket only when it is provably stale: owned by this user and with
// nobody listening.
func Listen(addr string) (net.Listener, error) { return listen(addr) }

// Dial connects to the daemon at addr and, before returning, checks that
// the server runs as this user (ErrImpostor otherwise), so that nothing is
// sent to a process that took the channel's place. On Windows the client
// lets the server identify (not impersonate) it, so that the server can
// measure its user.
func Dial(ctx context.Context, addr string) (net.Conn, error) { return dial(ctx, addr) }
