package mcpserve

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hostlink/hostlink/internal/jsonrpcline"
)

// stdioConn is the connection of Serve: newline-delimited JSON-RPC over r
// and w, as the SDK's IOTransport speaks it, with two differences that
// matter to a session's cost and its safety.
//
// Reading: each line is checked by jsonrpcline, which answers a bad line
// itself (the SDK would end the session over it) and hands over the
// message already split into its members; the SDK gets it as a
// jsonrpc.Request or jsonrpc.Response without decoding it again. The
// SDK's own connection decodes every message three times over, each time
// with a fresh 32 KiB decoder buffer, and passes it between goroutines;
// that was most of the allocation, and so of the garbage collection, of
// a small call.
//
// Writing: a response carrying an encoded result (encodedResults) is
// written from its parts; every other message is encoded by the SDK's
// jsonrpc.EncodeMessage, as the SDK's connection does.
type stdioConn struct {
	e     *encodedResults
	lines *jsonrpcline.Reader // read by the SDK's one reading goroutine
	r     io.Closer
	w     io.WriteCloser

	replay   []jsonrpc.Message // read before lines (Resumed)
	holdBack bool              // the replayed initialize's answer is still to come; c.mu

	mu     sync.Mutex // serializes writes to w
	closed bool

	closeOnce sync.Once
	closeErr  error
}

// Resumed is a session whose start a front end answered before this
// session began (`hostlink mcp` answers from its catalogue while the
// daemon it started starts, then hands the client over): the client
// already has the answer to its initialize. The session replays that
// initialize first, under an id of its own, and does not send its
// answer; with Initialized, the client's notifications/initialized,
// which the front end took, is replayed after it.
type Resumed struct {
	Initialize  json.RawMessage // the client's initialize params
	Initialized bool
}

// resumeID is the replayed initialize's id, one no client picks; only the
// first answer with it is held back.
const resumeID = "hostlink-resumed-initialize"

// replay is what the session reads before r.
func (rs *Resumed) replay() []jsonrpc.Message {
	if rs == nil {
		return nil
	}
	id, _ := jsonrpc.MakeID(resumeID)
	m := []jsonrpc.Message{&jsonrpc.Request{ID: id, Method: "initialize", Params: rs.Initialize}}
	if rs.Initialized {
		m = append(m, &jsonrpc.Request{Method: "notifications/initialized"})
	}
	return m
}

func (e *encodedResults) transport(r io.ReadCloser, w io.WriteCloser, maxLine int, resumed *Resumed) mcp.Transport {
	return stdioTransport{e: e, r: r, w: w, maxLine: maxLine, resumed: resumed}
}

type stdioTransport struct {
	e       *encodedResults
	r       io.ReadCloser
	w       io.WriteCloser
	maxLine int
	resumed *Resumed
}

func (t stdioTransport) Connect(context.Context) (mcp.Connection, error) {
	c := &stdioConn{e: t.e, lines: jsonrpcline.NewReader(t.r, t.maxLine), r: t.r, w: t.w, replay: t.resumed.replay()}
	c.holdBack = len(c.replay) > 0
	return c, nil
}

// Read returns the next message. Closing the connection ends a Read that
// waits for input, since it closes r.
func (c *stdioConn) Read(ctx context.Context) (jsonrpc.Message, error) {
	if len(c.replay) > 0 {
		m := c.replay[0]
		c.replay = c.replay[1:]
		return m, nil
	}
	for {
		m, err := c.lines.Next()
		var bad *jsonrpcline.LineError
		if errors.As(err, &bad) {
			if err := c.write(ctx, bad.Response()); err != nil {
				return nil, err
			}
			continue
		}
		if err != nil {
			return nil, err
		}
		return message(m)
	}
}

// message is m as the SDK's types. jsonrpcline has checked what
// jsonrpc.DecodeMessage would: the version, the id's type, the method's,
// and a response's result or error.
func message(m jsonrpcline.Message) (jsonrpc.Message, error) {
	id, err := messageID(m.ID)
	if err != nil {
		return nil, err
	}
	if m.IsRequest {
		return &jsonrpc.Request{ID: id, Method: m.Method, Params: m.Params}, nil
	}
	resp := &jsonrpc.Response{ID: id, Result: m.Result}
	if m.Error != nil {
		we := new(jsonrpc.Error)
		if err := json.Unmarshal(m.Error, we); err != nil {
			return nil, err
		}
		resp.Error = we
	}
	return resp, nil
}

// messageID converts a checked id: a JSON string, an integer or absent.
func messageID(raw json.RawMessage) (jsonrpc.ID, error) {
	switch {
	case raw == nil:
		return jsonrpc.ID{}, nil
	case raw[0] == '"':
		var s string
		if err := json.Unmarshal(raw, &s); err != nil {
			return jsonrpc.ID{}, err
		}
		return jsonrpc.MakeID(s)
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	if err != nil {
		return jsonrpc.ID{}, err
	}
	// Exact: jsonrpcline bounds integer ids to ±(2^53-1).
	return jsonrpc.MakeID(float64(n))
}

var resultTail = []byte(`"result":0}`)

func (c *stdioConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	resp, ok := msg.(*jsonrpc.Response)
	if ok && c.heldBack(resp) {
		return nil
	}
	if !ok || resp.Error != nil {
		return c.writeMessage(ctx, msg)
	}
	key := c.placeholder(resp.Result)
	r, ok := c.e.take(key)
	if !ok {
		return c.writeMessage(ctx, msg)
	}
	before, between, after, shaped := spliceParts(resp.Result, key, r.structured != nil)
	if !shaped {
		out := *resp
		out.Result = splice(resp.Result, key, r)
		return c.writeMessage(ctx, &out)
	}
	// The SDK encodes the envelope (version, id); the result, already
	// valid compact JSON, is written as it is rather than re-validated.
	head, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: resp.ID, Result: json.RawMessage("0")})
	if err != nil || !bytes.HasSuffix(head, resultTail) {
		out := *resp
		out.Result = splice(resp.Result, key, r)
		return c.writeMessage(ctx, &out)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.writable(ctx); err != nil {
		return err
	}
	// The response is streamed through a small buffer rather than built
	// whole: a large result is not copied again. c.mu keeps it together.
	w := bufio.NewWriterSize(c.w, min(64<<10, len(head)+len(resp.Result)+2*len(r.text)+len(r.structured)+64))
	w.Write(head[:len(head)-2])
	w.Write(before)
	w.WriteString(`"text":`)
	writeQuoted(w, r.text)
	if r.structured != nil {
		w.Write(between)
		w.WriteString(`"structuredContent":`)
		w.Write(r.structured)
	}
	w.Write(after)
	w.WriteString("}\n")
	return w.Flush()
}

// heldBack reports whether resp answers the replayed initialize, which
// the client must not see (it has its answer), and then stops looking.
func (c *stdioConn) heldBack(resp *jsonrpc.Response) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.holdBack || resp.ID.Raw() != resumeID {
		return false
	}
	c.holdBack = false
	return true
}

// writeMessage writes msg as the SDK encodes it, on one line.
func (c *stdioConn) writeMessage(ctx context.Context, msg jsonrpc.Message) error {
	data, err := jsonrpc.EncodeMessage(msg)
	if err != nil {
		return err
	}
	return c.write(ctx, append(data, '\n'))
}

// write writes one whole line.
func (c *stdioConn) write(ctx context.Context, line []byte) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.writable(ctx); err != nil {
		return err
	}
	_, err := c.w.Write(line)
	return err
}

// writable reports why nothing may be written now, if so; c.mu is held.
func (c *stdioConn) writable(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		return err
	}
	if c.closed {
		return errors.New("mcpserve: write on a closed connection")
	}
	return nil
}

// placeholder returns the placeholder key in an encoded CallToolResult:
// the first JSON string that starts with the prefix, or "".
func (c *stdioConn) placeholder(result []byte) string {
	i := bytes.Index(result, []byte(`"`+c.e.prefix))
	if i < 0 {
		return ""
	}
	rest := result[i+1:]
	j := bytes.IndexByte(rest, '"')
	if j < 0 {
		return ""
	}
	return string(rest[:j])
}

// Close closes r and w once; results still held are dropped.
func (c *stdioConn) Close() error {
	c.closeOnce.Do(func() {
		c.mu.Lock()
		c.closed = true
		c.mu.Unlock()
		c.e.drop()
		c.closeErr = errors.Join(c.r.Close(), c.w.Close())
	})
	return c.closeErr
}

func (c *stdioConn) SessionID() string { return "" }
