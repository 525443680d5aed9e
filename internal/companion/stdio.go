package companion

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// A companion the runtime starts itself (the WSL interop route) speaks the
// same protocol as a network companion, WebSocket included, but over the
// helper's standard input and output. Keeping the WebSocket layer means
// one framing, one set of close codes and one read limit for both routes;
// only the byte stream underneath differs.

// pipeConn is a net.Conn over a read and a write stream: the helper's
// stdout and stdin on the runtime's side, its own stdin and stdout on the
// helper's side. Deadlines are not supported; the WebSocket library ends
// blocked reads by closing the connection, which Close does.
type pipeConn struct {
	r    io.ReadCloser
	w    io.WriteCloser
	once sync.Once
}

func (c *pipeConn) Read(b []byte) (int, error)  { return c.r.Read(b) }
func (c *pipeConn) Write(b []byte) (int, error) { return c.w.Write(b) }

func (c *pipeConn) Close() error {
	var err error
	c.once.Do(func() { err = errors.Join(c.w.Close(), c.r.Close()) })
	return err
}

func (*pipeConn) LocalAddr() net.Addr              { return stdioAddr{} }
func (*pipeConn) RemoteAddr() net.Addr             { return stdioAddr{} }
func (*pipeConn) SetDeadline(time.Time) error      { return nil }
func (*pipeConn) SetReadDeadline(time.Time) error  { return nil }
func (*pipeConn) SetWriteDeadline(time.Time) error { return nil }

type stdioAddr struct{}

func (stdioAddr) Network() string { return "stdio" }
func (stdioAddr) String() string  { return "stdio" }

// oneConnListener hands out one connection, then blocks until closed.
type oneConnListener struct {
	conn   chan net.Conn
	closed chan struct{}
	once   sync.Once
}

func newOneConnListener(c net.Conn) *oneConnListener {
	l := &oneConnListener{conn: make(chan net.Conn, 1), closed: make(chan struct{})}
	l.conn <- c
	return l
}

func (l *oneConnListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conn:
		return c, nil
	case <-l.closed:
		return nil, net.ErrClosed
	}
}

func (l *oneConnListener) Close() error {
	l.once.Do(func() { close(l.closed) })
	return nil
}

func (l *oneConnListener) Addr() net.Addr { return stdioAddr{} }

// Streams are the two halves of a helper's connection to its runtime.
type Streams struct {
	In  io.ReadCloser  // from the runtime
	Out io.WriteCloser // to the runtime
}

// dialStdio opens the WebSocket to the runtime over s.
func dialStdio(ctx context.Context, s Streams) (*websocket.Conn, error) {
	conns := make(chan net.Conn, 1)
	conns <- &pipeConn{r: s.In, w: s.Out}
	client := &http.Client{Transport: &http.Transport{
		DialContext: func(context.Context, string, string) (net.Conn, error) {
			select {
			case c := <-conns:
				return c, nil
			default:
				return nil, errors.New("companion: the standard streams carry one connection")
			}
		},
	}}
	ws, _, err := websocket.Dial(ctx, "ws://stdio/companion", &websocket.DialOptions{HTTPClient: client})
	return ws, err
}
