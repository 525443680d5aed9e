// Package jsonrpcline reads newline-delimited JSON-RPC 2.0, the framing of
// MCP's stdio transport, so that no line a client sends can end the
// session or desynchronise the stream.
//
// A Reader hands out one message at a time, split into its members, and
// only from lines that hold exactly one well-formed JSON-RPC 2.0 message:
// a request, a notification or a response, with "jsonrpc":"2.0", an id
// that is a string or an integer, a string method, structured params, and
// nesting no deeper than MaxDepth. Anything else, including a batch (MCP dropped batching in
// 2025-06-18), is answered instead of returned: Next reports a *LineError
// carrying the JSON-RPC error response to send (-32700 parse error or
// -32600 invalid request, with the request's id when it could be read and
// null otherwise), and reading goes on at the next line. A line longer than
// the limit is skipped up to its newline without being held in memory. A
// line cut short simply fails to parse: the next line starts afresh.
//
// The package knows nothing of MCP's methods: it makes the stream safe for
// whatever handles the messages (package mcpserve hands them to the MCP
// SDK as they are, without decoding them again).
package jsonrpcline

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/hostlink/hostlink/internal/textsafe"
	"io"
	"strconv"

	segjson "github.com/segmentio/encoding/json"
)

// JSON-RPC 2.0 error codes this package answers with.
const (
	CodeParseError     = -32700
	CodeInvalidRequest = -32600
)

// MaxDepth bounds the nesting of objects and arrays in a message: the Go
// MCP SDK refuses deeper messages (by ending the session), so they are
// answered here.
const MaxDepth = 1000

// maxSafeID bounds integer ids: JavaScript clients and the Go SDK hold ids
// as float64, which is exact only up to 2^53-1.
const maxSafeID = 1<<53 - 1

// LineError is a line that is not a JSON-RPC message. Response is the
// error response to send for it; the Reader has already moved past it.
type LineError struct {
	Code    int
	Message string
	// ID is the message's id when it was a valid one, else JSON null.
	ID json.RawMessage
}

func (e *LineError) Error() string {
	return fmt.Sprintf("JSON-RPC error %d: %s", e.Code, e.Message)
}

// Response returns the JSON-RPC error response for e, as one line ending
// in a newline.
func (e *LineError) Response() []byte {
	id := e.ID
	if len(id) == 0 {
		id = json.RawMessage("null")
	}
	b, _ := json.Marshal(struct {
		JSONRPC string          `json:"jsonrpc"`
		ID      json.RawMessage `json:"id"`
		Error   struct {
			Code    int    `json:"code"`
			Message string `json:"message"`
		} `json:"error"`
	}{JSONRPC: "2.0", ID: id, Error: struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
	}{e.Code, e.Message}})
	return append(b, '\n')
}

// Reader reads JSON-RPC messages, one per line.
type Reader struct {
	r       *bufio.Reader
	maxLine int
	line    []byte // reused between calls
}

// NewReader returns a Reader of r that refuses lines over maxLine bytes
// (excluding the line ending).
func NewReader(r io.Reader, maxLine int) *Reader {
	return &Reader{r: bufio.NewReaderSize(r, 64<<10), maxLine: maxLine}
}

// Next returns the next message. Blank lines are skipped. A line that is
// not a message yields a *LineError, after which Next may be called again.
// Any other error (io.EOF at the end) ends the stream; a last line without
// a newline is still returned first. The message owns its bytes: they stay
// valid after the next call.
func (r *Reader) Next() (Message, error) {
	for {
		line, err := r.readLine()
		if errors.Is(err, errTooLong) {
			return Message{}, &LineError{Code: CodeInvalidRequest,
				Message: fmt.Sprintf("Invalid Request: the line is over %d bytes; it was skipped", r.maxLine)}
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			if err != nil {
				return Message{}, err
			}
			continue
		}
		// A last line without a newline is returned now, the end next time.
		m, lerr := Parse(bytes.Clone(line))
		if lerr != nil {
			return Message{}, lerr
		}
		return m, nil
	}
}

var errTooLong = errors.New("line too long")

// readLine returns the next line without its newline. A line over maxLine
// is read to its end and discarded (errTooLong). At the end of input it
// returns what is left, possibly empty, with io.EOF.
func (r *Reader) readLine() ([]byte, error) {
	r.line = r.line[:0]
	tooLong := false
	for {
		chunk, err := r.r.ReadSlice('\n')
		if !tooLong {
			if len(r.line)+len(chunk) > r.maxLine+1 { // +1: the newline
				tooLong = true
				r.line = r.line[:0]
			} else {
				r.line = append(r.line, chunk...)
			}
		}
		switch {
		case err == nil:
			if tooLong {
				return nil, errTooLong
			}
			return r.line[:len(r.line)-1], nil
		case errors.Is(err, bufio.ErrBufferFull):
			continue
		case tooLong:
			return nil, errTooLong
		default:
			if len(r.line) > 0 && errors.Is(err, io.EOF) {
				return r.line, nil
			}
			return r.line, err
		}
	}
}

// Message is one well-formed JSON-RPC 2.0 message: its line and its
// members, as raw JSON within the line (nil when absent).
type Message struct {
	Line []byte
	// ID is a string or an integer within ±(2^53-1); nil for a notification.
	ID json.RawMessage
	// Method is set when IsRequest: the message is a request or a
	// notification. Otherwise it is a response, carrying Result or Error.
	Method    string
	IsRequest bool
	Params    json.RawMessage // an object, an array or null
	Result    json.RawMessage
	Error     json.RawMessage // an object with an integer code and a string message; never null
}

// Parse returns the message line (without its newline) holds if it is
// exactly one well-formed JSON-RPC 2.0 message, and otherwise the error to
// answer it with. The message's members are sub-slices of line.
func Parse(line []byte) (Message, *LineError) {
	line = bytes.TrimSpace(line)
	// Depth first: encoding/json gives up on deep nesting with a syntax
	// error, which would misname the problem.
	if depth(line) > MaxDepth {
		return Message{}, invalid(nil, fmt.Sprintf("nested deeper than %d levels", MaxDepth))
	}
	// The SDK's decoder is the one to satisfy; its validator is also much
	// faster than encoding/json's on a large write.
	if !segjson.Valid(line) {
		return Message{}, &LineError{Code: CodeParseError, Message: "Parse error: the line is not one JSON value"}
	}
	switch line[0] {
	case '{':
	case '[':
		return Message{}, invalid(nil, "batches are not supported; send one message per line")
	default:
		return Message{}, invalid(nil, "a message must be a JSON object")
	}
	m, dup := members(line)
	if dup != "" {
		return Message{}, invalid(nil, fmt.Sprintf("member %q appears twice", textsafe.Clip(dup, 64)))
	}
	msg := Message{Line: line}
	// The id first, so that every later error can echo it.
	if raw, ok := m["id"]; ok {
		if !validID(raw) {
			return Message{}, invalid(nil, "id must be a string or an integer (within ±(2^53-1))")
		}
		msg.ID = raw
	}
	id := msg.ID
	var version string
	if raw, ok := m["jsonrpc"]; !ok || json.Unmarshal(raw, &version) != nil || version != "2.0" {
		return Message{}, invalid(id, `"jsonrpc" must be "2.0"`)
	}
	if raw, ok := m["method"]; ok {
		if json.Unmarshal(raw, &msg.Method) != nil {
			return Message{}, invalid(id, "method must be a string")
		}
		msg.IsRequest = true
		if p, ok := m["params"]; ok && p[0] != '{' && p[0] != '[' && string(p) != "null" {
			return Message{}, invalid(id, "params must be an object or an array")
		}
		if _, ok := m["result"]; ok {
			return Message{}, invalid(id, "a request has no result")
		}
		if _, ok := m["error"]; ok {
			return Message{}, invalid(id, "a request has no error")
		}
		msg.Params = m["params"]
		return msg, nil
	}
	// A response, to a request the server sent.
	if id == nil {
		return Message{}, invalid(nil, "a message without a method is a response and needs an id")
	}
	e, hasErr := m["error"]
	if hasErr && string(e) == "null" {
		hasErr = false
	}
	result, hasResult := m["result"]
	switch {
	case hasErr && hasResult:
		return Message{}, invalid(id, "a response has a result or an error, not both")
	case hasErr:
		if !validError(e) {
			return Message{}, invalid(id, "error must be an object with an integer code and a string message")
		}
		msg.Error = e
	case !hasResult:
		return Message{}, invalid(id, "a message needs a method (a request) or a result or error (a response)")
	}
	msg.Result = result
	return msg, nil
}

func invalid(id json.RawMessage, why string) *LineError {
	return &LineError{Code: CodeInvalidRequest, Message: "Invalid Request: " + why, ID: id}
}

// validID accepts a string, or an integer written as one (no fraction or
// exponent) within ±maxSafeID.
func validID(raw json.RawMessage) bool {
	if raw[0] == '"' {
		return true
	}
	n, err := strconv.ParseInt(string(raw), 10, 64)
	return err == nil && n >= -maxSafeID && n <= maxSafeID
}

func validError(raw json.RawMessage) bool {
	if raw[0] != '{' {
		return false
	}
	m, dup := members(raw)
	if dup != "" {
		return false
	}
	code, ok := m["code"]
	if !ok {
		return false
	}
	if _, err := strconv.ParseInt(string(code), 10, 64); err != nil {
		return false
	}
	msg, ok := m["message"]
	var s string
	return ok && json.Unmarshal(msg, &s) == nil
}
