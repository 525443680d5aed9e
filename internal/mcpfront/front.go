package mcpfront

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"runtime/debug"
	"strings"
	"time"

	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ipc"
	"github.com/hostlink/hostlink/internal/memtrim"
)

// CodeNoDaemon: `hostlink mcp` was told not to start a daemon and none is
// running.
const CodeNoDaemon errcode.Code = "DAEMON_NOT_RUNNING"

// Options configure Run.
type Options struct {
	// Addr is the control channel's address (ipc.Address).
	Addr string
	// NoStart makes Run fail when no daemon runs instead of starting one.
	NoStart bool
	// Start describes the daemon to start when none runs.
	Start Start
	// StartFlags names the flags given for a started daemon, which a
	// running one does not take: Run says so on Stderr.
	StartFlags []string
	// Stderr receives what the front end has to tell the user.
	Stderr io.Writer
	// Catalogue is the file where the front end keeps what a daemon it
	// started answered to the start of a session (see Catalogue), and
	// CatalogueKey names that daemon (see CatalogueKey). Without a file,
	// a client waits for the daemon's start.
	Catalogue, CatalogueKey string
}

// Run serves one stdio client: stdin is the client's messages, stdout the
// daemon's answers. It returns when the daemon ends the session, which it
// does once stdin ends (the client closed it or died), or when ctx is done.
func Run(ctx context.Context, o Options, stdin io.Reader, stdout io.Writer) error {
	hello := ipc.MCPHello{ClientPID: os.Getppid()}
	var conn net.Conn
	var r *bufio.Reader
	var err error
	in, out, passable := ipc.PassableStdio(stdin, stdout)
	if passable {
		// The daemon serves the client on its own pipes: no copy, and no
		// hop through this process, on each message.
		var passed bool
		conn, r, passed, err = ipc.OpenMCPOnStdio(ctx, o.Addr, hello, in, out)
		if passed {
			o.runningFlags()
			return waitStdio(ctx, conn, r)
		}
	} else {
		conn, r, err = ipc.OpenMCP(ctx, o.Addr, hello)
	}
	if errors.Is(err, ipc.ErrNotRunning) {
		if o.NoStart {
			return errcode.New(CodeNoDaemon, "no hostlink daemon is running at %s: start one with `hostlink serve` (or the autostart unit, `hostlink install`), or drop --no-start so that `hostlink mcp` starts one", o.Addr)
		}
		return o.autoStart(ctx, hello, stdin, stdout)
	}
	if err != nil {
		return err
	}
	o.runningFlags()
	return pipe(ctx, conn, r, stdin, stdout)
}

// runningFlags says that flags for a started daemon do nothing to the
// running one.
func (o Options) runningFlags() {
	if len(o.StartFlags) > 0 {
		fmt.Fprintf(o.Stderr, "hostlink mcp: %s apply only to a daemon it starts; the running daemon keeps its own configuration (`hostlink status` shows it)\n", strings.Join(o.StartFlags, ", "))
	}
}

// waitStdio waits for the end of a session the daemon serves on the
// client's own stdin and stdout, or for ctx (this process is stopped,
// which closes the connection and so ends the session).
func waitStdio(ctx context.Context, conn net.Conn, r *bufio.Reader) error {
	defer conn.Close()
	// From here this process only waits, for as long as the client runs:
	// what its start allocated (most of its heap, and garbage by now) goes
	// back to the system instead of staying resident for the session. Not
	// at once: the client's first requests, which the daemon is answering
	// now, need the CPU more.
	trim := time.AfterFunc(memtrim.DefaultQuiet, debug.FreeOSMemory)
	defer trim.Stop()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	return sessionEnded(ctx, ipc.WaitStdioSession(r))
}

// pipe copies stdin to conn and r (conn's reader) to stdout until the
// daemon closes the session or ctx is done.
func pipe(ctx context.Context, conn net.Conn, r *bufio.Reader, stdin io.Reader, stdout io.Writer) error {
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	go func() {
		io.Copy(conn, stdin)
		// The client is done: the daemon reads the end of the session,
		// cancels what is still running (an approval still waiting
		// becomes abandoned) and closes.
		closeWrite(conn)
	}()
	return sessionEnded(ctx, copyOut(stdout, r))
}

// closeWrite half-closes conn when it can, so that answers already on the
// way still arrive; otherwise it closes it.
func closeWrite(conn net.Conn) {
	if cw, ok := conn.(interface{ CloseWrite() error }); ok && cw.CloseWrite() == nil {
		return
	}
	conn.Close()
}
