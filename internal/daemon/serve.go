package daemon

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/console"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ipc"
	"github.com/hostlink/hostlink/internal/mcpserve"
	"github.com/hostlink/hostlink/internal/ops"
	"github.com/hostlink/hostlink/internal/paths"
	"github.com/hostlink/hostlink/internal/private"
)

// CodeListenInUse: the HTTP address (server.listen or --listen) is taken;
// details.listen is the address.
const CodeListenInUse errcode.Code = "LISTEN_ADDRESS_IN_USE"

// tokenFile names the HTTP bearer token in the state directory.
const tokenFile = "http.token"

// Token returns the bearer token for the HTTP endpoint, kept in the state
// directory and created (private to the user) on first use. A token file
// that others can read is refused.
func Token(dirs paths.Dirs) (string, error) {
	if err := private.MkdirAll(dirs.State); err != nil {
		return "", err
	}
	p := filepath.Join(dirs.State, tokenFile)
	b, err := os.ReadFile(p)
	if errors.Is(err, os.ErrNotExist) {
		var raw [32]byte
		rand.Read(raw[:])
		tok := base64.RawURLEncoding.EncodeToString(raw[:])
		if err := private.WriteFile(p, []byte(tok+"\n")); err != nil {
			return "", fmt.Errorf("writing token: %w", err)
		}
		return tok, nil
	}
	if err != nil {
		return "", err
	}
	if err := private.Check(p); err != nil {
		return "", fmt.Errorf("token file %s: %w", p, err)
	}
	tok := strings.TrimSpace(string(b))
	if len(tok) < 32 {
		return "", fmt.Errorf("token file %s is malformed; delete it to make a new one", p)
	}
	return tok, nil
}

// ServeHTTP serves MCP over Streamable HTTP on the configured loopback
// address, and the local control channel (package ipc) beside it, until ctx
// is done, then shuts down gracefully. ready, if not nil, receives the bound
// HTTP address once both are listening. It fails before serving anything
// when another daemon holds the control channel.
func (d *Daemon) ServeHTTP(ctx context.Context, ready func(addr net.Addr)) error {
	tok, err := Token(d.Dirs)
	if err != nil {
		return err
	}
	ipcAddr, err := ipc.Address(d.Dirs.Runtime)
	if err != nil {
		return err
	}
	ipcLn, err := ipc.Listen(ipcAddr)
	if err != nil {
		return err
	}
	defer ipcLn.Close()
	ln, err := mcpserve.Listen(d.Config.Server.Listen)
	if mcpserve.AddrInUse(err) {
		return errcode.New(CodeListenInUse, "%s is already in use by another program: give hostlink another loopback address with `hostlink serve --listen 127.0.0.1:PORT` or [server] listen in %s", d.Config.Server.Listen, d.configFile).
			With("listen", d.Config.Server.Listen)
	}
	if err != nil {
		return err
	}
	h := mcpserve.NewHTTPHandler(d.Registry, mcpserve.HTTPOptions{Token: tok, MaxBodyBytes: d.maxMessageBytes(), Refusals: d.Refusals,
		SessionStarted: d.sessions.Begin, SessionEnded: d.sessionEnded})
	mux := http.NewServeMux()
	mux.Handle("/mcp", h)
	mux.Handle(console.Prefix, d.consoleHandler("http://"+ln.Addr().String()))
	// A browser pointed at the address finds the console.
	mux.Handle("GET /{$}", http.RedirectHandler(console.Prefix, http.StatusFound))
	idle := newIdleWatch(d.IdleExit, d.busy)
	lim := d.httpListener(ln)
	srv := httpServer(idle.handler(mux), lim, defaultHTTPTimeouts)
	d.transports.add(audit.MCPHTTP, "http://"+ln.Addr().String()+"/mcp")
	d.transports.add(audit.IPC, ipcAddr)
	d.transports.add(audit.Console, "http://"+ln.Addr().String()+console.Prefix)
	if err := d.Event("daemon_start", map[string]any{"transport": string(audit.MCPHTTP), "listen": ln.Addr().String(), "ipc": ipcAddr}); err != nil {
		ln.Close()
		return fmt.Errorf("audit log: %w", err)
	}
	parent := ctx
	ctx, stopIPC := context.WithCancel(ctx)
	defer stopIPC()
	defer d.transports.down()
	ipcSrv := &ipc.Server{Registry: d.Registry, Refusals: d.Refusals, MCP: d.serveMCPSession, ConnState: idle.conn,
		SessionStarted: d.sessions.Begin, SessionEnded: d.sessionEnded}
	ipcDone := make(chan error, 1)
	go func() { ipcDone <- ipcSrv.Serve(ctx, ipcLn) }()
	if ready != nil {
		ready(ln.Addr())
	}
	// Starting allocated several times the live heap: it goes back once
	// the daemon has waited a while, as a burst of calls' does.
	d.trim.Touch()
	d.runUpdateCheck(ctx)
	errc := make(chan error, 1)
	go func() { errc <- srv.Serve(lim) }()
	var reason string
	if d.IdleExit > 0 {
		slog.Info("this daemon stops when idle", "idle_exit", d.IdleExit.String())
	}
	select {
	case err := <-errc:
		stopIPC()
		<-ipcDone
		slog.Error("the HTTP server failed", "err", err)
		d.stopped(map[string]any{"reason": "server error"})
		return err
	case err := <-ipcDone:
		// Serve returns nil only once ctx is done; anything else is fatal.
		if ctx.Err() == nil {
			srv.Close()
			slog.Error("the control channel failed", "err", err)
			d.stopped(map[string]any{"reason": "control channel error"})
			return fmt.Errorf("control channel: %w", err)
		}
		// ctx ended it, as in the case below.
		reason = d.signalReason(parent)
		ipcDone <- err // for the wait below
	case <-idle.Fired():
		reason = "idle for " + d.IdleExit.String()
	case reason = <-d.stopReq:
	case <-ctx.Done():
		reason = d.signalReason(parent)
	}
	shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = srv.Shutdown(shutdown)
	if errors.Is(err, context.DeadlineExceeded) {
		err = srv.Close()
	}
	d.stopped(map[string]any{"reason": reason})
	// The control channel closes last, so that `hostlink stop`, which
	// waits for its connection to close, returns once the stop is
	// recorded.
	stopIPC()
	<-ipcDone
	return err
}

// signalReason says why ctx, the daemon's context, ended: the signal that
// signal.NotifyContext names in its cause, which under a service manager
// is the manager's stop.
func (d *Daemon) signalReason(ctx context.Context) string {
	reason := "context cancelled"
	if c := context.Cause(ctx); c != nil && c != context.Canceled {
		reason = c.Error()
	}
	if strings.HasPrefix(d.Mode, ModeService) {
		reason += ": the service manager's stop"
	}
	return reason
}

// stopped records the daemon's stop, in the audit log and hostlink's log;
// a record that cannot be written is logged, since there is nothing left
// to refuse.
func (d *Daemon) stopped(details map[string]any) {
	slog.Info("hostlink stopping", "reason", details["reason"], "mode", d.Mode)
	if err := d.Event("daemon_stop", details); err != nil {
		slog.Warn("the daemon's stop is not in the audit log", "err", err)
	}
}

// maxMessageBytes bounds one MCP message, an HTTP body or a stdio line: a
// base64 write of the largest allowed file, plus JSON framing.
func (d *Daemon) maxMessageBytes() int64 {
	return d.Config.Limits.MaxWriteBytes/3*4 + 1<<20
}

// serveMCPSession serves an MCP session that `hostlink mcp` opened on the
// control channel (ipc.MethodMCPSession): its client is served here, with
// this daemon's approvals, audit chain and leases, as transport mcp-stdio.
func (d *Daemon) serveMCPSession(ctx context.Context, peer ipc.Peer, hello ipc.MCPHello, r io.ReadCloser, w io.Writer) error {
	who := fmt.Sprintf("client pid %d via hostlink mcp %s", hello.ClientPID, peer)
	session := ops.NewSessionKey(audit.MCPStdio)
	d.sessions.Begin(session)
	// A session's opening (initialize, tools/list) is no call, but as
	// much garbage as one; so is its end.
	d.trim.Touch()
	defer d.trim.Touch()
	// A "this session" grant ends with the session.
	defer d.sessionEnded(session)
	var resumed *mcpserve.Resumed
	if rs := hello.Resume; rs != nil && rs.Initialize != nil {
		resumed = &mcpserve.Resumed{Initialize: rs.Initialize, Initialized: rs.Initialized}
	}
	// A session hostlink's own child opened (an agent runtime's MCP
	// client, a command) acts for an agent: policed as any MCP client, and
	// never asked to approve its own requests.
	client := mcpserve.Client{Transport: audit.MCPStdio, Peer: who, Session: session, Child: peer.Child}
	err := mcpserve.ServeResumed(ctx, d.Registry, client, int(d.maxMessageBytes()), resumed, r, nopWriteCloser{w})
	if errors.Is(err, context.Canceled) || errors.Is(err, io.EOF) {
		return nil
	}
	return err
}

// sessionEnded ends a client session: it is no longer shown connected,
// and its "this session" grants end with it.
func (d *Daemon) sessionEnded(session string) {
	d.sessions.End(session)
	d.Approvals().EndSession(session)
}

// nopWriteCloser leaves closing the connection to the control channel.
type nopWriteCloser struct{ io.Writer }

func (nopWriteCloser) Close() error { return nil }

// requestStop asks ServeHTTP to stop, giving why; a second request while
// one is pending adds nothing.
func (d *Daemon) requestStop(reason string) {
	select {
	case d.stopReq <- reason:
	default:
	}
}

// busy reports running commands or agent tasks, which keep an idle daemon
// up: stopping would end them.
func (d *Daemon) busy() bool {
	st := d.Status()
	return len(st.Commands) > 0 || len(st.Tasks) > 0
}
