package mcpserve

import (
	"cmp"
	"crypto/subtle"
	"net"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/connlimit"
	"github.com/hostlink/hostlink/internal/ops"
)

// HTTPOptions configure the Streamable HTTP endpoint.
type HTTPOptions struct {
	// Token is the bearer token every request must carry.
	Token string
	// MaxBodyBytes bounds a request body (a write_file of the largest allowed
	// content, base64-encoded, must fit).
	MaxBodyBytes int64
	// Refusals, if set, records refused requests (counted, so that a
	// flood of them does not grow the audit log).
	Refusals *audit.Refusals
	// SessionStarted and SessionEnded, if set, are told the key of each
	// MCP session (see ops.Caller.Session) at its first call and when it
	// ends: the client deleted it, or it was idle for SessionTimeout.
	SessionStarted, SessionEnded func(session string)
	// SessionTimeout is how long a session may be idle before it ends
	// (DefaultSessionTimeout when zero).
	SessionTimeout time.Duration
}

// DefaultSessionTimeout is how long an HTTP MCP session may be idle
// before it ends, and its "this session" grants with it.
const DefaultSessionTimeout = 30 * time.Minute

// NewHTTPHandler returns the Streamable HTTP handler for reg. Each request
// must come from a loopback address, name a loopback Host, carry no foreign
// Origin and present the bearer token; otherwise it is refused before the
// MCP layer sees it.
//
// One MCP server serves every session: the SDK asks for a server on every
// request, and building one (its tools and their schemas) costs far more
// than the call it would serve. It is built at the first request that
// passes the guard, not with the handler: a daemon started for a local
// agent's stdio session may never see an HTTP client, and its start
// competes with that agent's for the CPU. Each call is attributed to the
// address of the connection that carried it, which the guard passes on in
// peerHeader.
func NewHTTPHandler(reg *ops.Registry, o HTTPOptions) http.Handler {
	w := &sessionWatch{started: o.SessionStarted, ended: o.SessionEnded, seen: map[*mcp.ServerSession]bool{}}
	srv := sync.OnceValue(func() *mcp.Server {
		return newHTTPServer(reg, audit.MCPHTTP, func(req *mcp.CallToolRequest) string {
			if req.Extra != nil {
				return req.Extra.Header.Get(peerHeader)
			}
			return ""
		}, w.key, nil)
	})
	mcpHandler := mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv() },
		&mcp.StreamableHTTPOptions{MaxRequestBodyBytes: o.MaxBodyBytes, SessionTimeout: cmp.Or(o.SessionTimeout, DefaultSessionTimeout)})
	return &guard{next: mcpHandler, opts: o}
}

// newHTTPServer builds NewHTTPHandler's server (a variable: a test counts
// the builds).
var newHTTPServer = newServer

// httpSession is the key of a Streamable HTTP session: the session id the
// SDK generated for it (random, and a request naming another session's id
// needs the bearer token too). A stateless request has none.
func httpSession(ss *mcp.ServerSession) string {
	if ss == nil || ss.ID() == "" {
		return ""
	}
	return string(audit.MCPHTTP) + ":" + ss.ID()
}

// sessionWatch reports each HTTP session's start, at its first call, and
// its end, when the SDK closes it (a DELETE, the idle timeout).
type sessionWatch struct {
	started, ended func(string)
	mu             sync.Mutex
	seen           map[*mcp.ServerSession]bool
}

// key is httpSession, watching the session from its first call.
func (w *sessionWatch) key(ss *mcp.ServerSession) string {
	key := httpSession(ss)
	if key == "" {
		return ""
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.seen[ss] {
		return key
	}
	w.seen[ss] = true
	if w.started != nil {
		w.started(key)
	}
	go func() {
		ss.Wait()
		w.mu.Lock()
		delete(w.seen, ss)
		w.mu.Unlock()
		if w.ended != nil {
			w.ended(key)
		}
	}()
	return key
}

// peerHeader carries the client's address (as the connection measured it)
// from the guard to the tool handlers; a value the client sent is replaced.
const peerHeader = "X-Hostlink-Peer"

type guard struct {
	next http.Handler
	opts HTTPOptions
}

func (g *guard) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	status, reason := g.check(r)
	if status != 0 {
		g.opts.Refusals.Refuse(remoteIP(r.RemoteAddr), audit.Record{
			Time: time.Now(), Transport: audit.MCPHTTP, Peer: r.RemoteAddr,
			Op: "http_request_refused", Code: "AUTH_FAILED", Details: map[string]any{"reason": reason},
		})
		if status == http.StatusUnauthorized {
			w.Header().Set("WWW-Authenticate", `Bearer realm="hostlink"`)
		}
		// A refused client keeps no connection open.
		w.Header().Set("Connection", "close")
		http.Error(w, reason, status)
		return
	}
	// The connection carried the token: it is kept while connections that
	// never did are closed to make room (package connlimit).
	connlimit.Trust(r.Context())
	r.Header.Set(peerHeader, r.RemoteAddr)
	g.next.ServeHTTP(w, r)
}

// check returns a non-zero status and a reason when r must be refused.
func (g *guard) check(r *http.Request) (int, string) {
	if why := LocalRequest(r); why != "" {
		return http.StatusForbidden, why
	}
	auth := r.Header.Get("Authorization")
	scheme, token, ok := strings.Cut(auth, " ")
	if !ok || !strings.EqualFold(scheme, "Bearer") || !TokenMatches(token, g.opts.Token) {
		return http.StatusUnauthorized, "a valid bearer token is required (see `hostlink token`)"
	}
	return 0, ""
}

// LocalRequest returns why r is not a local request, or "": it must come
// from a loopback address, name a loopback Host (against DNS rebinding)
// and carry no Origin other than a loopback one. The web console shares
// these checks (and adds its own same-origin rule).
func LocalRequest(r *http.Request) string {
	if !loopbackAddr(r.RemoteAddr) {
		return "only loopback clients are served"
	}
	if !loopbackHost(r.Host) {
		return "the Host header must name a loopback address"
	}
	if origin := r.Header.Get("Origin"); origin != "" && !loopbackOrigin(origin) {
		return "cross-origin requests are refused"
	}
	return ""
}

// TokenMatches reports, in constant time, whether the presented token is
// the expected one; an empty expected token matches nothing.
func TokenMatches(presented, want string) bool {
	return want != "" && subtle.ConstantTimeCompare([]byte(strings.TrimSpace(presented)), []byte(want)) == 1
}

// remoteIP is the address of hostport without its port, the source a
// refusal is counted under.
func remoteIP(hostport string) string {
	if host, _, err := net.SplitHostPort(hostport); err == nil {
		return host
	}
	return hostport
}

// RemoteIP is r's remote address without its port.
func RemoteIP(r *http.Request) string { return remoteIP(r.RemoteAddr) }

func loopbackAddr(hostport string) bool {
	host, _, err := net.SplitHostPort(hostport)
	if err != nil {
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// loopbackHost accepts Host values a local client sends: a loopback IP or
// "localhost", with or without a port.
func loopbackHost(host string) bool {
	h := host
	if hh, _, err := net.SplitHostPort(host); err == nil {
		h = hh
	}
	h = strings.TrimSuffix(strings.TrimPrefix(h, "["), "]")
	if strings.EqualFold(h, "localhost") {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}

func loopbackOrigin(origin string) bool {
	u, err := url.Parse(origin)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
		return false
	}
	return loopbackHost(u.Host)
}

// Listen opens a TCP listener on addr, refusing any address that is not a
// loopback IP (or localhost, which is bound as 127.0.0.1).
func Listen(addr string) (net.Listener, error) {
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if strings.EqualFold(host, "localhost") {
		host = "127.0.0.1"
	}
	ip := net.ParseIP(strings.TrimSuffix(strings.TrimPrefix(host, "["), "]"))
	if ip == nil || !ip.IsLoopback() {
		return nil, &net.AddrError{Err: "refusing to listen on a non-loopback address", Addr: addr}
	}
	return net.Listen("tcp", net.JoinHostPort(ip.String(), port))
}
