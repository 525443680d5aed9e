package ipc

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/hostlink/hostlink/internal/textsafe"
	"io"

	"github.com/hostlink/hostlink/internal/errcode"
)

// ProtocolVersion is the only protocol_version this package speaks.
const ProtocolVersion = 1

// MaxFrame bounds one frame, request or response, excluding its newline.
const MaxFrame = 1 << 20

// maxRequestID bounds request_id, which is echoed and audited.
const maxRequestID = 128

// Codes this channel adds to errcode's. They describe the frame, not the
// operation, so no registry operation returns them.
const (
	// ProtocolError: the frame is not one JSON object with exactly the four
	// request fields, each of the right type.
	ProtocolError errcode.Code = "PROTOCOL_ERROR"
	// UnsupportedVersion: protocol_version is not ProtocolVersion.
	UnsupportedVersion errcode.Code = "UNSUPPORTED_PROTOCOL_VERSION"
	// FrameTooLarge: a request line, or the response to it, is over MaxFrame.
	FrameTooLarge errcode.Code = "FRAME_TOO_LARGE"
	// PeerRefused: the connecting process is not hostlink's user, or could
	// not be measured. The connection is closed after this response.
	PeerRefused errcode.Code = "PEER_REFUSED"
)

// Request is one request frame.
type Request struct {
	ProtocolVersion int             `json:"protocol_version"`
	RequestID       string          `json:"request_id"`
	Method          string          `json:"method"`
	Params          json.RawMessage `json:"params"`
}

// Response is one response frame: exactly one of Result and Error is set
// in the final frame of a request. Before it, an operation that reports
// progress (a call held for approval says what it waits for) sends frames
// with only Progress set, for the same request_id.
type Response struct {
	ProtocolVersion int             `json:"protocol_version"`
	RequestID       string          `json:"request_id"`
	Result          json.RawMessage `json:"result,omitempty"`
	Error           *errcode.Error  `json:"error,omitempty"`
	Progress        *Progress       `json:"progress,omitempty"`
}

// Progress is an interim frame's report.
type Progress struct {
	Done    float64 `json:"done"`
	Total   float64 `json:"total,omitempty"` // 0 when unknown
	Message string  `json:"message,omitempty"`
}

// requestFields are the request's fields; each must appear exactly once.
var requestFields = []string{"protocol_version", "request_id", "method", "params"}

// DecodeFrame parses one request line (without its newline). On error the
// returned Request carries whatever request_id could be read, so that the
// error response can still echo it.
func DecodeFrame(line []byte) (Request, *errcode.Error) {
	var req Request
	if len(line) > MaxFrame {
		return req, errcode.New(FrameTooLarge, "request frame is over %d bytes", MaxFrame)
	}
	fields, err := topLevel(line)
	if err != nil {
		return req, errcode.New(ProtocolError, "request is not a JSON object: %v", err)
	}
	// Read request_id first so that every later error can echo it.
	if raw, ok := fields["request_id"]; ok {
		if err := json.Unmarshal(raw, &req.RequestID); err != nil || len(req.RequestID) > maxRequestID {
			req.RequestID = ""
			return req, errcode.New(ProtocolError, "request_id must be a string of at most %d bytes", maxRequestID)
		}
	}
	for name := range fields {
		if !isRequestField(name) {
			return req, errcode.New(ProtocolError, "unknown request field %q (a request has exactly protocol_version, request_id, method, params)", textsafe.Clip(name, 64))
		}
	}
	for _, name := range requestFields {
		if _, ok := fields[name]; !ok {
			return req, errcode.New(ProtocolError, "missing request field %q", name)
		}
	}
	// The raw token, not a decoded value: json.Number would accept "1" in
	// quotes, and 1.0 or 1e0 are not the integer 1 this protocol names.
	version := string(fields["protocol_version"])
	if version == "" || (version[0] != '-' && (version[0] < '0' || version[0] > '9')) {
		return req, errcode.New(ProtocolError, "protocol_version must be a number")
	}
	if version != "1" {
		return req, errcode.New(UnsupportedVersion, "protocol_version %s is not supported; this daemon speaks %d", textsafe.Clip(version, 32), ProtocolVersion)
	}
	req.ProtocolVersion = ProtocolVersion
	if err := json.Unmarshal(fields["method"], &req.Method); err != nil || req.Method == "" {
		return req, errcode.New(ProtocolError, "method must be a non-empty string")
	}
	params := fields["params"]
	if len(params) == 0 || params[0] != '{' {
		return req, errcode.New(ProtocolError, "params must be a JSON object")
	}
	req.Params = params
	return req, nil
}

// topLevel splits a JSON object into its members, refusing duplicate names
// (encoding/json would silently keep the last) and trailing data.
func topLevel(b []byte) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if tok != json.Delim('{') {
		return nil, errors.New("not an object")
	}
	out := make(map[string]json.RawMessage, len(requestFields))
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		name, _ := tok.(string)
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("duplicate field %q", textsafe.Clip(name, 64))
		}
		out[name] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("data after the object")
	}
	return out, nil
}

func isRequestField(name string) bool {
	for _, f := range requestFields {
		if name == f {
			return true
		}
	}
	return false
}

// encodeResponse renders r as one line. A response that would be over
// MaxFrame becomes a FRAME_TOO_LARGE error instead: a truncated frame would
// be worse than none.
func encodeResponse(r Response) []byte {
	r.ProtocolVersion = ProtocolVersion
	b, err := json.Marshal(r)
	if err != nil {
		b, _ = json.Marshal(Response{ProtocolVersion: ProtocolVersion, RequestID: r.RequestID,
			Error: errcode.New(errcode.Internal, "the result could not be encoded")})
	}
	if len(b) > MaxFrame {
		b, _ = json.Marshal(Response{ProtocolVersion: ProtocolVersion, RequestID: r.RequestID,
			Error: errcode.New(FrameTooLarge, "the response is over %d bytes; ask for less (e.g. a byte range or a page)", MaxFrame)})
	}
	return append(b, '\n')
}
