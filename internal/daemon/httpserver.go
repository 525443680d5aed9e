package daemon

import (
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/connlimit"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ipc"
)

// httpTimeouts bound the phases of an HTTP request. There is no overall
// read or write timeout: an MCP stream or a long tool call legitimately
// keeps a request open for as long as it runs.
type httpTimeouts struct {
	Header time.Duration // from connecting, or from the first byte of a request, to its last header
	Idle   time.Duration // a keep-alive connection waiting for its next request
	Body   time.Duration // reading one request body
}

// defaultHTTPTimeouts are the HTTP endpoint's (MCP and the console).
var defaultHTTPTimeouts = httpTimeouts{Header: 10 * time.Second, Idle: 2 * time.Minute, Body: time.Minute}

const (
	httpMaxHeaderBytes = 64 << 10
	// fdReserve are descriptors kept for everything but HTTP connections:
	// the control channel's, the audit log, databases, commands' pipes.
	fdReserve = ipc.DefaultMaxConns + 256
)

// httpListener bounds the HTTP endpoint's connections (package
// connlimit), within the descriptors the process may open.
func (d *Daemon) httpListener(ln net.Listener) *connlimit.Listener {
	s := d.Config.Server
	maxConns := connlimit.Fit(s.MaxConnections, fdReserve, 16)
	if maxConns < s.MaxConnections {
		slog.Warn("server.max_connections lowered to fit the descriptor limit (RLIMIT_NOFILE)", "configured", s.MaxConnections, "used", maxConns)
	}
	l := connlimit.Listen(ln, connlimit.Limits{Max: maxConns, PerPeer: min(s.MaxConnectionsPerPeer, maxConns)}, connlimit.LocalPeer)
	l.OnShed = func(peer, reason string) {
		d.Refusals.Refuse(peer, audit.Record{Transport: audit.MCPHTTP, Peer: peer, Op: "connection_shed",
			Code: string(errcode.Overloaded), Details: map[string]any{"reason": reason}})
	}
	return l
}

// httpServer serves h on connections that ln admits, within to.
func httpServer(h http.Handler, ln *connlimit.Listener, to httpTimeouts) *http.Server {
	return &http.Server{
		Handler:           bodyDeadline(h, to.Body),
		ReadHeaderTimeout: to.Header,
		IdleTimeout:       to.Idle,
		MaxHeaderBytes:    httpMaxHeaderBytes,
		ConnState:         ln.ConnState,
		ConnContext:       connlimit.WithConn,
		ErrorLog:          slog.NewLogLogger(slog.Default().Handler(), slog.LevelWarn),
	}
}

// bodyDeadline bounds reading a request's body to d. The bound does not
// reach into the handler's own time: net/http clears the read deadline
// when the body has been read to its end (to watch for the client going
// away), so a long tool call is not cut off by it.
func bodyDeadline(h http.Handler, d time.Duration) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			http.NewResponseController(w).SetReadDeadline(time.Now().Add(d))
		}
		h.ServeHTTP(w, r)
	})
}
