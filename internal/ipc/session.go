package ipc

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"time"

	"github.com/hostlink/hostlink/internal/errcode"
)

// MethodMCPSession is the control channel's one method that is not an
// operation: as the first request of a connection it turns the connection
// into an MCP session in the stdio framing (newline-delimited JSON-RPC),
// served by the daemon until either end closes. `hostlink mcp` uses it, so
// that its stdio client shares the daemon's approvals, audit chain and
// leases instead of running a second instance.
const MethodMCPSession = "mcp_session"

// MCPHello is the params of MethodMCPSession: what the front end tells the
// daemon about its own client. The front end itself is measured, as every
// peer is; ClientPID is its parent, the process that started it.
type MCPHello struct {
	ClientPID int `json:"client_pid"`
}

// MCPFunc serves one MCP session: messages from the front end are read
// from r, answers written to w, until r ends (the front end closed) or ctx
// is done. peer is the front end's measured identity. Closing r ends its
// reads (a read waiting for the front end returns) and leaves the
// connection itself to the server, which closes it when MCPFunc returns.
type MCPFunc func(ctx context.Context, peer Peer, hello MCPHello, r io.ReadCloser, w io.Writer) error

// serveSession answers a MethodMCPSession request and then serves the
// connection as that session; it returns when the session ends.
func (s *Server) serveSession(ctx context.Context, c net.Conn, r *bufio.Reader, peer Peer, req Request) {
	var hello MCPHello
	if err := json.Unmarshal(req.Params, &hello); err != nil {
		s.write(c, Response{RequestID: req.RequestID, Error: errcode.New(errcode.InvalidArgument, "%s params: %v", MethodMCPSession, err)})
		return
	}
	if s.MCP == nil {
		s.write(c, Response{RequestID: req.RequestID, Error: errcode.New(errcode.UnknownOperation, "this daemon serves no MCP sessions on its control channel")})
		return
	}
	if !s.write(c, Response{RequestID: req.RequestID, Result: json.RawMessage(`{}`)}) {
		return
	}
	// A session is as long as its client's: idle periods between calls
	// are normal, and the MCP server bounds its own writes.
	c.SetDeadline(time.Time{})
	s.MCP(ctx, peer, hello, sessionReader{r, c}, c)
}

// sessionReader is a session's stream from the front end. Close stops its
// reads by their deadline: the connection stays open for answers still
// being written until the session returns.
type sessionReader struct {
	*bufio.Reader
	c net.Conn
}

func (s sessionReader) Close() error { return s.c.SetReadDeadline(time.Now()) }

// OpenMCP connects to the daemon at addr and opens an MCP session on the
// connection (MethodMCPSession). Once it returns, the caller writes MCP
// messages to the connection and reads the daemon's from the returned
// reader, which holds whatever the daemon sent after its answer.
func OpenMCP(ctx context.Context, addr string, hello MCPHello) (net.Conn, *bufio.Reader, error) {
	cl, err := Connect(ctx, addr)
	if err != nil {
		return nil, nil, err
	}
	params, _ := json.Marshal(hello)
	if _, err := cl.Call(ctx, MethodMCPSession, params); err != nil {
		cl.Close()
		return nil, nil, fmt.Errorf("opening an MCP session: %w", err)
	}
	cl.conn.SetDeadline(time.Time{})
	return cl.conn, cl.r, nil
}
