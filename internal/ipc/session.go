package ipc

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
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
	// Stdio: right after the answer the front end hands the daemon its
	// own stdin and stdout (SendStdio; Unix only), and the daemon serves
	// the client on them directly instead of through the front end's
	// copies. The connection then carries nothing more: it ends when the
	// session does, and the session ends when the connection does (the
	// front end was killed).
	Stdio bool `json:"stdio,omitempty"`
	// Resume (with Stdio): the front end began the session itself, so the
	// daemon takes it over part way; see Resume. A daemon that takes it
	// says so in its answer ("resume"); one that predates it does not, and
	// the front end then keeps the descriptors.
	Resume *Resume `json:"resume,omitempty"`
}

// Resume is how far a front end got with its client before handing it
// over: the client's initialize, which the front end answered (from its
// catalogue, or through a session of its own), and what it read from the
// client and did not answer, in order, for the daemon to read before the
// client's stdin.
type Resume struct {
	Initialize json.RawMessage `json:"initialize,omitempty"` // its params; absent when the client did not begin with one
	// Initialized: the client's notifications/initialized came and was
	// taken by the front end.
	Initialized bool   `json:"initialized,omitempty"`
	Pending     []byte `json:"pending,omitempty"`
}

// MaxPending bounds Resume.Pending: the request carrying it is one frame
// (MaxFrame), and base64 takes four bytes for three. A front end with more
// read keeps copying instead.
const MaxPending = MaxFrame/2 - 4096

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
	if hello.Stdio && !stdioSupported {
		s.write(c, Response{RequestID: req.RequestID, Error: errcode.New(errcode.InvalidArgument, "this daemon cannot take a front end's stdin and stdout here")})
		return
	}
	answer := json.RawMessage(`{}`)
	switch {
	case hello.Stdio && hello.Resume != nil:
		answer = json.RawMessage(`{"stdio":true,"resume":true}`)
	case hello.Stdio:
		answer = json.RawMessage(`{"stdio":true}`)
	}
	if !s.write(c, Response{RequestID: req.RequestID, Result: answer}) {
		return
	}
	// A session is as long as its client's: idle periods between calls
	// are normal, and the MCP server bounds its own writes.
	c.SetDeadline(time.Time{})
	if !hello.Stdio {
		s.MCP(ctx, peer, hello, sessionReader{r, c}, c)
		return
	}
	std, err := receiveStdio(c, r)
	if err != nil {
		s.write(c, Response{RequestID: req.RequestID, Error: errcode.New(errcode.InvalidArgument, "%s: %v", MethodMCPSession, err)})
		return
	}
	defer std.close()
	// The front end sends nothing more; its connection's end (it exited or
	// was killed) ends the session.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		io.Copy(io.Discard, r)
		cancel()
	}()
	var in io.ReadCloser = std.files[0]
	if hello.Resume != nil && len(hello.Resume.Pending) > 0 {
		in = pendingReader{io.MultiReader(bytes.NewReader(hello.Resume.Pending), in), in}
	}
	s.MCP(ctx, peer, hello, in, std.files[1])
}

// pendingReader reads what a front end had read from its client before
// the client's stdin; Close closes the stdin.
type pendingReader struct {
	io.Reader
	io.Closer
}

// sessionReader is a session's stream from the front end. Close stops its
// reads by their deadline: the connection stays open for answers still
// being written until the session returns.
type sessionReader struct {
	*bufio.Reader
	c net.Conn
}

func (s sessionReader) Close() error { return s.c.SetReadDeadline(time.Now()) }

// WaitStdioSession waits for the end of a session whose stdin and stdout
// the front end handed over (SendStdio): the daemon closes the connection
// then, or first answers why it could not take them.
func WaitStdioSession(r *bufio.Reader) error {
	line, err := r.ReadBytes('\n')
	if len(line) == 0 {
		if errors.Is(err, io.EOF) || errors.Is(err, net.ErrClosed) {
			return nil
		}
		return err
	}
	var resp Response
	if json.Unmarshal(line, &resp) != nil || resp.Error == nil {
		return fmt.Errorf("the daemon sent %.80q on a session it serves on the client's own stdio", line)
	}
	return resp.Error
}

// OpenMCP connects to the daemon at addr and opens an MCP session on the
// connection (MethodMCPSession). Once it returns, the caller writes MCP
// messages to the connection and reads the daemon's from the returned
// reader, which holds whatever the daemon sent after its answer.
func OpenMCP(ctx context.Context, addr string, hello MCPHello) (net.Conn, *bufio.Reader, error) {
	hello.Stdio = false
	conn, r, _, err := openMCP(ctx, addr, hello)
	return conn, r, err
}

// OpenMCPOnStdio opens an MCP session that the daemon serves on in and
// out, the front end's own stdin and stdout (MCPHello.Stdio), and hands
// them over; the caller then waits for the session's end
// (WaitStdioSession). passed is false when the daemon does not take them
// (one that predates it answers without "stdio"): the session is then
// open as OpenMCP's, for the caller to copy.
//
// With hello.Resume, a daemon that does not take the resumption (one that
// predates it) gets a connection closed before any descriptor: passed is
// false, conn nil, and the caller goes on as it was.
func OpenMCPOnStdio(ctx context.Context, addr string, hello MCPHello, in, out *os.File) (conn net.Conn, r *bufio.Reader, passed bool, err error) {
	hello.Stdio = true
	if hello.Resume != nil && len(hello.Resume.Pending) > MaxPending {
		return nil, nil, false, nil
	}
	conn, r, answer, err := openMCP(ctx, addr, hello)
	if err != nil {
		return nil, nil, false, err
	}
	var took struct {
		Stdio  bool `json:"stdio"`
		Resume bool `json:"resume"`
	}
	ok := json.Unmarshal(answer, &took) == nil && took.Stdio
	if hello.Resume != nil && (!ok || !took.Resume) {
		conn.Close()
		return nil, nil, false, nil
	}
	if !ok {
		return conn, r, false, nil
	}
	if err := SendStdio(conn, in, out); err != nil {
		conn.Close()
		return nil, nil, false, fmt.Errorf("handing the daemon stdin and stdout: %w", err)
	}
	return conn, r, true, nil
}

func openMCP(ctx context.Context, addr string, hello MCPHello) (net.Conn, *bufio.Reader, json.RawMessage, error) {
	cl, err := Connect(ctx, addr)
	if err != nil {
		return nil, nil, nil, err
	}
	params, _ := json.Marshal(hello)
	answer, err := cl.Call(ctx, MethodMCPSession, params)
	if err != nil {
		cl.Close()
		return nil, nil, nil, fmt.Errorf("opening an MCP session: %w", err)
	}
	cl.conn.SetDeadline(time.Time{})
	return cl.conn, cl.r, answer, nil
}
