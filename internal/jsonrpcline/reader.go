// Package jsonrpcline reads newline-delimited JSON-RPC 2.0, the framing of
// MCP's stdio transport, so that no line a client sends can end the
// session or desynchronise the stream.
//
// A Reader hands out one line at a time, and only lines that hold exactly
// one well-formed JSON-RPC 2.0 message: a request, a notification or a
// response, with "jsonrpc":"2.0", an id that is a string or an integer,
// a string method, structured params, and nesting no deeper than
// MaxDepth. Anything else, including a batch (MCP dropped batching in
// 2025-06-18), is answered instead of returned: Next reports a *LineError
// carrying the JSON-RPC error response to send (-32700 parse error or
// -32600 invalid request, with the request's id when it could be read and
// null otherwise), and reading goes on at the next line. A line longer than
// the limit is skipped up to its newline without being held in memory. A
// line cut short simply fails to parse: the next line starts afresh.
//
// The package knows nothing of MCP's methods: it makes the stream safe for
// whatever decodes the lines (the MCP SDK, or a forwarder to the daemon).
package jsonrpcline

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
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

// Next returns the next message line, without its line ending and
// surrounding blanks; it is valid until the next call. Blank lines are
// skipped. A line that is not a message yields a *LineError, after which
// Next may be called again. Any other error (io.EOF at the end) ends the
// stream; a last line without a newline is still returned first.
func (r *Reader) Next() ([]byte, error) {
	for {
		line, err := r.readLine()
		if errors.Is(err, errTooLong) {
			return nil, &LineError{Code: CodeInvalidRequest,
				Message: fmt.Sprintf("Invalid Request: the line is over %d bytes; it was skipped", r.maxLine)}
		}
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			if err != nil {
				return nil, err
			}
			continue
		}
		if lerr := Check(line); lerr != nil {
			return nil, lerr
		}
		// A last line without a newline is returned now, the end next time.
		return line, nil
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

// Check returns nil if line (without its newline) is exactly one
// well-formed JSON-RPC 2.0 message, and otherwise the error to answer it
// with.
func Check(line []byte) *LineError {
	line = bytes.TrimSpace(line)
	// Depth first: encoding/json gives up on deep nesting with a syntax
	// error, which would misname the problem.
	if depth(line) > MaxDepth {
		return invalid(nil, fmt.Sprintf("nested deeper than %d levels", MaxDepth))
	}
	// The SDK's decoder is the one to satisfy; its validator is also much
	// faster than encoding/json's on a large write.
	if !segjson.Valid(line) {
		return &LineError{Code: CodeParseError, Message: "Parse error: the line is not one JSON value"}
	}
	switch line[0] {
	case '{':
	case '[':
		return invalid(nil, "batches are not supported; send one message per line")
	default:
		return invalid(nil, "a message must be a JSON object")
	}
	m, dup := members(line)
	if dup != "" {
		return invalid(nil, fmt.Sprintf("member %q appears twice", truncate(dup, 64)))
	}
	// The id first, so that every later error can echo it.
	var id json.RawMessage
	if raw, ok := m["id"]; ok {
		if !validID(raw) {
			return invalid(nil, "id must be a string or an integer (within ±(2^53-1))")
		}
		id = raw
	}
	var version string
	if raw, ok := m["jsonrpc"]; !ok || json.Unmarshal(raw, &version) != nil || version != "2.0" {
		return invalid(id, `"jsonrpc" must be "2.0"`)
	}
	if raw, ok := m["method"]; ok {
		var method string
		if json.Unmarshal(raw, &method) != nil {
			return invalid(id, "method must be a string")
		}
		if p, ok := m["params"]; ok && p[0] != '{' && p[0] != '[' && string(p) != "null" {
			return invalid(id, "params must be an object or an array")
		}
		if _, ok := m["result"]; ok {
			return invalid(id, "a request has no result")
		}
		if _, ok := m["error"]; ok {
			return invalid(id, "a request has no error")
		}
		return nil
	}
	// A response, to a request the server sent.
	if id == nil {
		return invalid(nil, "a message without a method is a response and needs an id")
	}
	e, hasErr := m["error"]
	if hasErr && string(e) == "null" {
		hasErr = false
	}
	_, hasResult := m["result"]
	switch {
	case hasErr && hasResult:
		return invalid(id, "a response has a result or an error, not both")
	case hasErr:
		if !validError(e) {
			return invalid(id, "error must be an object with an integer code and a string message")
		}
	case !hasResult:
		return invalid(id, "a message needs a method (a request) or a result or error (a response)")
	}
	return nil
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

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "…"
}
