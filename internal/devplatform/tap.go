package devplatform

import (
	"context"

	"github.com/hostlink/hostlink/internal/link/wire"
)

// TapFrame is one frame of an executor connection.
type TapFrame struct {
	Conn         uint64 // the connection, numbered from 1 as they are accepted
	Peer         string // ControlPeer or the session id
	FromExecutor bool
	Frame        []byte
}

// SetTap makes f see every frame of the connections accepted from now
// on: the executor's as read, the platform's just before they are sent.
// Tests check them against upstream's message models
// (internal/conformance). f must not block.
func (s *Server) SetTap(f func(TapFrame)) {
	s.mu.Lock()
	s.tap = f
	s.mu.Unlock()
}

// tapConn is a connection whose frames go past the server's tap.
type tapConn struct {
	*wire.Conn
	tap  func(TapFrame)
	id   uint64
	peer string
}

func (c *tapConn) ReadFrame(ctx context.Context) ([]byte, error) {
	b, err := c.Conn.ReadFrame(ctx)
	if err == nil && c.tap != nil {
		c.tap(TapFrame{Conn: c.id, Peer: c.peer, FromExecutor: true, Frame: b})
	}
	return b, err
}

func (c *tapConn) Send(ctx context.Context, e *wire.Envelope) error {
	b, err := e.Encode()
	if err != nil {
		return err
	}
	return c.SendRaw(ctx, b, wire.MaxFrameBytes)
}

func (c *tapConn) SendRaw(ctx context.Context, b []byte, limit int) error {
	if c.tap != nil && len(b) <= limit {
		c.tap(TapFrame{Conn: c.id, Peer: c.peer, Frame: b})
	}
	return c.Conn.SendRaw(ctx, b, limit)
}
