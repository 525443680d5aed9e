package daemon

import (
	"io"
	"log/slog"
	"net"
	"net/http"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/connlimit"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ipc"
	"github.com/hostlink/hostlink/internal/ops"
)

// Time and size limits of the HTTP endpoint (MCP and the console). There
// is no overall read or write timeout: an MCP stream or a long tool call
// legitimately keeps a request open for as long as it runs.
const (
	httpHeaderTimeout  = 10 * time.Second // from connecting, or from the first byte of a request, to its last header
	httpIdleTimeout    = 2 * time.Minute  // a keep-alive connection waiting for its next request
	httpBodyTimeout    = time.Minute      // reading one request body
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
	l := connlimit.Listen(ln, connlimit.Limits{Max: maxConns, PerPeer: min(s.MaxConnectionsPerPeer, maxConns)}, nil)
	l.OnShed = func(peer, reason string) {
		d.Refusals.Refuse(peer, audit.Record{Transport: ops.TransportMCPHTTP, Peer: peer, Op: "connection_shed",
			Code: string(errcode.Overloaded), Details: map[string]any{"reason": reason}})
	}
	return l
}

// httpServer serves h on connections that ln admits.
func httpServer(h http.Handler, ln *connlimit.Listener) *http.Server {
	return &http.Server{
		Handler:           bodyDeadline(h),
		ReadHeaderTimeout: httpHeaderTimeout,
		IdleTimeout:       httpIdleTimeout,
		MaxHeaderBytes:    httpMaxHeaderBytes,
		ConnState:         ln.ConnState,
		ConnContext:       connlimit.WithConn,
		ErrorLog:          slog.NewLogLogger(slog.Default().Handler(), slog.LevelWarn),
	}
}

// bodyDeadline bounds reading a request's body to httpBodyTimeout, and
// lifts the bound once the body is read, for the handler's own time.
func bodyDeadline(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body != nil && r.Body != http.NoBody {
			rc := http.NewResponseController(w)
			if rc.SetReadDeadline(time.Now().Add(httpBodyTimeout)) == nil {
				r.Body = &deadlineBody{ReadCloser: r.Body, rc: rc}
			}
		}
		h.ServeHTTP(w, r)
	})
}

type deadlineBody struct {
	io.ReadCloser
	rc   *http.ResponseController
	done bool
}

func (b *deadlineBody) Read(p []byte) (int, error) {
	n, err := b.ReadCloser.Read(p)
	if err == io.EOF && !b.done {
		b.done = true
		b.rc.SetReadDeadline(time.Time{})
	}
	return n, err
}
