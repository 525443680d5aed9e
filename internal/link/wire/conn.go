package wire

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/hostlink/hostlink/internal/textsafe"
	"io"
	"regexp"
	"sync"
	"time"

	"github.com/coder/websocket"
)

// writeTimeout bounds one frame's write: a 16 MiB frame over a slow link
// still fits, a stalled peer does not hold the writer forever.
const writeTimeout = 2 * time.Minute

// Conn carries envelopes over one WebSocket. Reads are single-threaded;
// Send is safe for concurrent use.
type Conn struct {
	ws *websocket.Conn
}

// NewConn wraps ws. The library's own read limit is turned off: a frame
// over MaxFrameBytes must be drained and refused, not close the link.
func NewConn(ws *websocket.Conn) *Conn {
	ws.SetReadLimit(-1)
	return &Conn{ws: ws}
}

// OversizeError is returned by ReadFrame for a frame over MaxFrameBytes.
// The frame has been drained; the connection is still usable.
type OversizeError struct {
	ID string // the frame's id if one was found near its start
}

func (e *OversizeError) Error() string {
	return fmt.Sprintf("frame exceeds %d bytes", MaxFrameBytes)
}

// idNear finds a frame's id in its first bytes without parsing the whole
// (refused) frame. It is compiled at its first use: its counted repetition
// makes a large program, and every hostlink process start, the CLI's
// included, would pay for it in package initialization.
var idNear = sync.OnceValue(func() *regexp.Regexp { return regexp.MustCompile(`"id"\s*:\s*"([^"\\]{1,128})"`) })

// ReadFrame returns the next message. Cancelling ctx closes the connection
// (the library's behaviour), so pass a context that lives as long as it.
func (c *Conn) ReadFrame(ctx context.Context) ([]byte, error) {
	_, r, err := c.ws.Reader(ctx)
	if err != nil {
		return nil, err
	}
	b, err := io.ReadAll(io.LimitReader(r, MaxFrameBytes+1))
	if err != nil {
		return nil, err
	}
	if len(b) <= MaxFrameBytes {
		return b, nil
	}
	if _, err := io.Copy(io.Discard, r); err != nil {
		return nil, err
	}
	oe := &OversizeError{}
	if m := idNear().FindSubmatch(b[:min(len(b), 4096)]); m != nil {
		oe.ID = string(m[1])
	}
	return nil, oe
}

// ErrFrameTooLarge is returned by Send for an envelope over MaxFrameBytes;
// nothing was sent.
var ErrFrameTooLarge = errors.New("link: envelope exceeds the frame limit")

// Send writes one envelope.
func (c *Conn) Send(ctx context.Context, e *Envelope) error {
	b, err := e.Encode()
	if err != nil {
		return err
	}
	return c.SendRaw(ctx, b, MaxFrameBytes)
}

// SendRaw writes b as one text frame if it is at most limit bytes.
func (c *Conn) SendRaw(ctx context.Context, b []byte, limit int) error {
	if len(b) > limit {
		return ErrFrameTooLarge
	}
	ctx, cancel := context.WithTimeout(ctx, writeTimeout)
	defer cancel()
	return c.ws.Write(ctx, websocket.MessageText, b)
}

// Close closes the connection with a status code and reason.
func (c *Conn) Close(code websocket.StatusCode, reason string) error {
	return c.ws.Close(code, textsafe.Clip(reason, 120))
}

// CloseNow closes the connection without a closing handshake.
func (c *Conn) CloseNow() error { return c.ws.CloseNow() }

// Close codes of protocol v1.1 after which hostlink does not reconnect.
const (
	CloseVersionMismatch websocket.StatusCode = 4426
	CloseTakenOver       websocket.StatusCode = 4427
	CloseRevoked         websocket.StatusCode = 4428
	CloseShutdown        websocket.StatusCode = 4429
)

// CloseInvalidHandshake is the code the upstream executor closes with
// when a HELLO_ACK breaks the handshake's rules (a capability it did not
// advertise, a missing field): hostlink uses it too.
const CloseInvalidHandshake websocket.StatusCode = 4400

// VersionMismatchReason is the 4426 close reason, as upstream formats it:
// JSON with the error, both sides' maximum versions and a hint (short
// enough for a close frame).
func VersionMismatchReason(ours, theirs string) string {
	b, _ := json.Marshal(map[string]string{"error": "PROTOCOL_VERSION_MISMATCH", "shim_max": textsafe.Clip(ours, 8),
		"platform_max": textsafe.Clip(theirs, 8), "hint": "update the older side"})
	return string(b)
}

// Terminal reports whether a close code forbids reconnecting.
func Terminal(code websocket.StatusCode) bool {
	return code >= CloseVersionMismatch && code <= CloseShutdown
}
