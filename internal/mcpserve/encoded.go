package mcpserve

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"io"
	"strconv"
	"sync"

	"github.com/modelcontextprotocol/go-sdk/jsonrpc"
	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/hostlink/hostlink/internal/jsonrpcline"
)

// The SDK encodes a tool result several times on its way out: each content
// block, the CallToolResult, then the JSON-RPC message, and encoding/json
// re-validates (compacts) every pre-encoded part at each level. For a large
// result (a 10 MiB file, a 10,000-entry listing) that is most of the call's
// time. On the connections hostlink owns (stdio) a tool result is therefore
// encoded once by the handler, and the SDK carries a short placeholder in
// its place that the connection swaps for the encoded bytes as it writes the
// response. What goes on the wire is the same result the SDK would send.

// encodedResults holds tool results encoded by the handler until the
// connection writes their responses.
type encodedResults struct {
	prefix string // "hostlink-result-<random>-", never guessable by a result

	mu   sync.Mutex
	next uint64
	m    map[string]encoded // placeholder -> the result's parts
}

// encoded is one tool result's parts: its text block and its structured
// content (JSON; nil when the result has none).
type encoded struct {
	text, structured []byte
}

func newEncodedResults() *encodedResults {
	var b [16]byte
	rand.Read(b[:])
	return &encodedResults{prefix: "hostlink-result-" + hex.EncodeToString(b[:]) + "-", m: map[string]encoded{}}
}

// put stores a result's parts and returns the placeholder that stands for
// them in the SDK's CallToolResult.
func (e *encodedResults) put(r encoded) string {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.next++
	key := e.prefix + strconv.FormatUint(e.next, 10)
	e.m[key] = r
	return key
}

func (e *encodedResults) take(key string) (encoded, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, ok := e.m[key]
	delete(e.m, key)
	return r, ok
}

// drop forgets every stored result (their responses will not be written).
func (e *encodedResults) drop() {
	e.mu.Lock()
	defer e.mu.Unlock()
	clear(e.m)
}

// result returns the CallToolResult the handler hands the SDK for r: the
// text block and the structured content (if r has one) are both the
// placeholder; images follow the text block as usual.
func (e *encodedResults) result(r encoded, images []mcp.Content) *mcp.CallToolResult {
	key := e.put(r)
	res := &mcp.CallToolResult{Content: append([]mcp.Content{&mcp.TextContent{Text: key}}, images...)}
	if r.structured != nil {
		res.StructuredContent = json.RawMessage(strconv.Quote(key))
	}
	return res
}

// encodedConn is the connection of Serve: the SDK's newline-delimited JSON
// connection over r and w, writing the responses that carry encoded results
// itself.
type encodedConn struct {
	mcp.Connection // the SDK's connection over the same pipes
	e              *encodedResults
	w              io.Writer

	mu     *sync.Mutex // serializes writes to w: the SDK's, ours and checkedReader's
	closed bool
}

func (e *encodedResults) transport(r io.ReadCloser, w io.WriteCloser, maxLine int) mcp.Transport {
	return encodedTransport{e: e, r: r, w: w, maxLine: maxLine}
}

type encodedTransport struct {
	e       *encodedResults
	r       io.ReadCloser
	w       io.WriteCloser
	maxLine int
}

func (t encodedTransport) Connect(ctx context.Context) (mcp.Connection, error) {
	mu := new(sync.Mutex)
	in := &checkedReader{lines: jsonrpcline.NewReader(t.r, t.maxLine), r: t.r, w: t.w, mu: mu}
	// The SDK's own line limit is never reached: checkedReader passes only
	// lines within maxLine.
	c, err := (&mcp.IOTransport{Reader: in, Writer: t.w, MaxLineLength: t.maxLine + 1}).Connect(ctx)
	if err != nil {
		return nil, err
	}
	return &encodedConn{Connection: c, e: t.e, w: t.w, mu: mu}, nil
}

var resultTail = []byte(`"result":0}`)

func (c *encodedConn) Write(ctx context.Context, msg jsonrpc.Message) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	resp, ok := msg.(*jsonrpc.Response)
	if !ok || resp.Error != nil {
		return c.Connection.Write(ctx, msg)
	}
	key := c.placeholder(resp.Result)
	r, ok := c.e.take(key)
	if !ok {
		return c.Connection.Write(ctx, msg)
	}
	before, between, after, shaped := spliceParts(resp.Result, key, r.structured != nil)
	if !shaped {
		out := *resp
		out.Result = splice(resp.Result, key, r)
		return c.Connection.Write(ctx, &out)
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	if c.closed {
		return errors.New("mcpserve: write on a closed connection")
	}
	// The SDK encodes the envelope (version, id); the result, already
	// valid compact JSON, is written as it is rather than re-validated.
	head, err := jsonrpc.EncodeMessage(&jsonrpc.Response{ID: resp.ID, Result: json.RawMessage("0")})
	if err != nil || !bytes.HasSuffix(head, resultTail) {
		out := *resp
		out.Result = splice(resp.Result, key, r)
		return c.Connection.Write(ctx, &out)
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

// placeholder returns the placeholder key in an encoded CallToolResult:
// the first JSON string that starts with the prefix, or "".
func (c *encodedConn) placeholder(result []byte) string {
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

func (c *encodedConn) Close() error {
	c.mu.Lock()
	c.closed = true
	c.mu.Unlock()
	c.e.drop()
	return c.Connection.Close()
}

// checkedReader is what the SDK reads the client's messages from: only
// lines that jsonrpcline accepts, each ending in a newline. A bad line is
// answered here with its JSON-RPC error and never reaches the SDK, which
// would end the session over it.
type checkedReader struct {
	lines   *jsonrpcline.Reader
	r       io.Closer
	w       io.Writer
	mu      *sync.Mutex
	pending []byte // the rest of the current line
}

func (c *checkedReader) Read(p []byte) (int, error) {
	for len(c.pending) == 0 {
		line, err := c.lines.Next()
		var bad *jsonrpcline.LineError
		if errors.As(err, &bad) {
			c.mu.Lock()
			_, werr := c.w.Write(bad.Response())
			c.mu.Unlock()
			if werr != nil {
				return 0, werr
			}
			continue
		}
		if err != nil {
			return 0, err
		}
		c.pending = append(line, '\n')
	}
	n := copy(p, c.pending)
	c.pending = c.pending[n:]
	return n, nil
}

func (c *checkedReader) Close() error { return c.r.Close() }

// spliceParts cuts the SDK's encoded result around the placeholders:
// before the text block's JSON string, between it and the structured
// content (when the result has one), and after. shaped is false if the
// encoding is not the expected shape.
func spliceParts(result []byte, key string, structured bool) (before, between, after []byte, shaped bool) {
	textAt := []byte(`"text":"` + key + `"`)
	i := bytes.Index(result, textAt)
	if i < 0 {
		return nil, nil, nil, false
	}
	if !structured {
		return result[:i], nil, result[i+len(textAt):], true
	}
	structAt := []byte(`"structuredContent":"` + key + `"`)
	j := bytes.Index(result, structAt)
	if j < i+len(textAt) {
		return nil, nil, nil, false
	}
	return result[:i], result[i+len(textAt) : j], result[j+len(structAt):], true
}

// splice returns the SDK's encoded result with the placeholder key
// replaced by r's text and structured content. If the SDK's encoding is
// not the expected shape it builds the result afresh (without images,
// which only the SDK's encoding held).
func splice(result []byte, key string, r encoded) []byte {
	before, between, after, ok := spliceParts(result, key, r.structured != nil)
	if !ok {
		res := &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: string(r.text)}}}
		if r.structured != nil {
			res.StructuredContent = json.RawMessage(r.structured)
		}
		b, _ := json.Marshal(res)
		return b
	}
	out := make([]byte, 0, len(result)+len(r.text)+len(r.text)/8+len(r.structured)+16)
	out = append(out, before...)
	out = append(out, `"text":`...)
	out = appendQuoted(out, r.text)
	if r.structured != nil {
		out = append(out, between...)
		out = append(out, `"structuredContent":`...)
		out = append(out, r.structured...)
	}
	return append(out, after...)
}

// writeQuoted writes s to w as a JSON string, escaping it a chunk at a time.
func writeQuoted(w *bufio.Writer, s []byte) {
	const chunk = 16 << 10
	scratch := make([]byte, 0, min(len(s), chunk)+chunk/8)
	w.WriteByte('"')
	for len(s) > 0 {
		n := min(len(s), chunk)
		scratch = appendEscaped(scratch[:0], s[:n])
		w.Write(scratch)
		s = s[n:]
	}
	w.WriteByte('"')
}

// appendQuoted appends s as a JSON string.
func appendQuoted(dst, s []byte) []byte {
	dst = append(dst, '"')
	return append(appendEscaped(dst, s), '"')
}

// appendEscaped appends s escaped for a JSON string. s is valid UTF-8 (a
// result's JSON or its text; see textAppender); only ASCII bytes are
// escaped, so s may be cut anywhere.
func appendEscaped(dst, s []byte) []byte {
	const hexDigits = "0123456789abcdef"
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"', '\\':
			dst = append(dst, '\\', c)
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\r':
			dst = append(dst, '\\', 'r')
		case '\t':
			dst = append(dst, '\\', 't')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xf])
		}
		start = i + 1
	}
	return append(dst, s[start:]...)
}
