package mcpserve

import (
	"bufio"
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"sync"
	"unicode/utf8"

	"github.com/hostlink/hostlink/internal/textsafe"
	"github.com/modelcontextprotocol/go-sdk/mcp"
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
	out = textsafe.AppendJSONString(out, r.text)
	if r.structured != nil {
		out = append(out, between...)
		out = append(out, `"structuredContent":`...)
		out = append(out, r.structured...)
	}
	return append(out, after...)
}

// writeQuoted writes s to w as a JSON string, escaping it a chunk at a
// time. A chunk ends before a character, never inside one, so that the
// chunks' escapes are the whole's (see textsafe.AppendJSONEscaped).
func writeQuoted(w *bufio.Writer, s []byte) {
	const chunk = 16 << 10
	scratch := make([]byte, 0, min(len(s), chunk)+chunk/8)
	w.WriteByte('"')
	for len(s) > 0 {
		n := len(s)
		if n > chunk {
			n = chunk
			// A character's first byte is at most UTFMax-1 back; with none
			// there, no character holds s[n] and the cut is as good.
			for back := 0; back < utf8.UTFMax-1 && !utf8.RuneStart(s[n]); back++ {
				n--
			}
		}
		scratch = textsafe.AppendJSONEscaped(scratch[:0], s[:n])
		w.Write(scratch)
		s = s[n:]
	}
	w.WriteByte('"')
}
