package ipc

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"strconv"
	"sync"
	"time"

	"github.com/hostlink/hostlink/internal/errcode"
)

// Client makes requests over one connection, one at a time.
type Client struct {
	mu   sync.Mutex
	conn net.Conn
	r    *bufio.Reader
	next int
}

// Connect dials the daemon at addr.
func Connect(ctx context.Context, addr string) (*Client, error) {
	c, err := Dial(ctx, addr)
	if err != nil {
		return nil, err
	}
	return &Client{conn: c, r: bufio.NewReaderSize(c, 64<<10)}, nil
}

// Close closes the connection.
func (c *Client) Close() error { return c.conn.Close() }

// Call sends one request and returns its result. A daemon's error response
// is returned as an *errcode.Error.
func (c *Client) Call(ctx context.Context, method string, params json.RawMessage) (json.RawMessage, error) {
	return c.CallProgress(ctx, method, params, nil)
}

// CallProgress is Call that hands each progress frame the daemon sends
// before the answer to progress (if not nil).
func (c *Client) CallProgress(ctx context.Context, method string, params json.RawMessage, progress func(Progress)) (json.RawMessage, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(params) == 0 {
		params = json.RawMessage("{}")
	}
	c.next++
	id := "c" + strconv.Itoa(c.next)
	b, err := json.Marshal(Request{ProtocolVersion: ProtocolVersion, RequestID: id, Method: method, Params: params})
	if err != nil {
		return nil, errcode.New(errcode.InvalidArgument, "params are not valid JSON")
	}
	if len(b) >= MaxFrame {
		return nil, errcode.New(FrameTooLarge, "request is over %d bytes", MaxFrame)
	}
	if dl, ok := ctx.Deadline(); ok {
		c.conn.SetDeadline(dl)
	} else {
		c.conn.SetDeadline(time.Time{})
	}
	// A refused peer is told why before the server closes, so the answer
	// is worth reading even when the write failed.
	_, werr := c.conn.Write(append(b, '\n'))
	for {
		line, err := readFrame(c.r)
		if werr != nil && len(line) == 0 {
			return nil, werr
		}
		if errors.Is(err, errFrameTooLarge) {
			return nil, fmt.Errorf("response is over %d bytes", MaxFrame)
		}
		if err != nil && len(line) == 0 {
			return nil, fmt.Errorf("reading response: %w", err)
		}
		var resp Response
		if err := json.Unmarshal(line, &resp); err != nil {
			return nil, fmt.Errorf("malformed response: %w", err)
		}
		if resp.Progress != nil && resp.Error == nil && resp.Result == nil && resp.RequestID == id {
			if progress != nil {
				progress(*resp.Progress)
			}
			continue
		}
		if resp.Error != nil {
			return nil, resp.Error
		}
		if resp.RequestID != id {
			return nil, fmt.Errorf("response for request %q, want %q", resp.RequestID, id)
		}
		return resp.Result, nil
	}
}

// WaitClosed reads and discards until the daemon closes the connection or
// ctx is done: after `stop`, the daemon closes every connection once it no
// longer serves.
func (c *Client) WaitClosed(ctx context.Context) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	stop := context.AfterFunc(ctx, func() { c.conn.SetReadDeadline(time.Now()) })
	defer stop()
	c.conn.SetReadDeadline(time.Time{})
	_, err := io.Copy(io.Discard, c.r)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	return err
}
