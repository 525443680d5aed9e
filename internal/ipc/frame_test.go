package ipc

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/errcode"
)

func TestDecodeFrame(t *testing.T) {
	big := `{"protocol_version":1,"request_id":"big","method":"m","params":{"x":"` + strings.Repeat("a", MaxFrame) + `"}}`
	tests := []struct {
		name, line string
		code       errcode.Code // "" for a valid request
		id         string       // request_id the error must still echo
	}{
		{"valid", `{"protocol_version":1,"request_id":"r1","method":"stat","params":{"path":"a"}}`, "", "r1"},
		{"valid, any order and spaces", ` { "params" : {} , "method":"status","request_id":"","protocol_version":1 } `, "", ""},
		{"version 2", `{"protocol_version":2,"request_id":"r","method":"m","params":{}}`, UnsupportedVersion, "r"},
		{"version 1.0", `{"protocol_version":1.0,"request_id":"r","method":"m","params":{}}`, UnsupportedVersion, "r"},
		{"version string", `{"protocol_version":"1","request_id":"r","method":"m","params":{}}`, ProtocolError, "r"},
		{"extra field", `{"protocol_version":1,"request_id":"r","method":"m","params":{},"x":1}`, ProtocolError, "r"},
		{"missing params", `{"protocol_version":1,"request_id":"r","method":"m"}`, ProtocolError, "r"},
		{"missing request_id", `{"protocol_version":1,"method":"m","params":{}}`, ProtocolError, ""},
		{"duplicate field", `{"protocol_version":1,"request_id":"r","method":"m","method":"n","params":{}}`, ProtocolError, ""},
		{"case-folded name", `{"Protocol_Version":1,"request_id":"r","method":"m","params":{}}`, ProtocolError, "r"},
		{"malformed JSON", `{"protocol_version":1,`, ProtocolError, ""},
		{"not JSON", `hello`, ProtocolError, ""},
		{"empty line", ``, ProtocolError, ""},
		{"array", `[1,2]`, ProtocolError, ""},
		{"trailing data", `{"protocol_version":1,"request_id":"r","method":"m","params":{}} {}`, ProtocolError, ""},
		{"params array", `{"protocol_version":1,"request_id":"r","method":"m","params":[]}`, ProtocolError, "r"},
		{"params null", `{"protocol_version":1,"request_id":"r","method":"m","params":null}`, ProtocolError, "r"},
		{"request_id number", `{"protocol_version":1,"request_id":7,"method":"m","params":{}}`, ProtocolError, ""},
		{"request_id too long", `{"protocol_version":1,"request_id":"` + strings.Repeat("i", 129) + `","method":"m","params":{}}`, ProtocolError, ""},
		{"method empty", `{"protocol_version":1,"request_id":"r","method":"","params":{}}`, ProtocolError, "r"},
		{"method number", `{"protocol_version":1,"request_id":"r","method":1,"params":{}}`, ProtocolError, "r"},
		{"over 1 MiB", big, FrameTooLarge, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := DecodeFrame([]byte(tt.line))
			if errcode.CodeOf(errOrNil(err)) != tt.code {
				t.Fatalf("code %v, want %q", err, tt.code)
			}
			if req.RequestID != tt.id {
				t.Errorf("request_id %q, want %q", req.RequestID, tt.id)
			}
			if err == nil && (req.ProtocolVersion != 1 || req.Method == "" || req.Params[0] != '{') {
				t.Errorf("valid request decoded as %+v", req)
			}
		})
	}
}

// errOrNil avoids a typed nil *errcode.Error inside a non-nil error.
func errOrNil(e *errcode.Error) error {
	if e == nil {
		return nil
	}
	return e
}

func TestEncodeResponseTooLarge(t *testing.T) {
	huge, _ := json.Marshal(strings.Repeat("x", MaxFrame))
	b := encodeResponse(Response{RequestID: "r9", Result: huge})
	if len(b) > MaxFrame || b[len(b)-1] != '\n' || bytes.Count(b, []byte("\n")) != 1 {
		t.Fatalf("response of %d bytes", len(b))
	}
	var r Response
	if err := json.Unmarshal(b, &r); err != nil || r.Error == nil || r.Error.Code != FrameTooLarge || r.RequestID != "r9" {
		t.Fatalf("got %s", b)
	}
}

func FuzzDecodeFrame(f *testing.F) {
	for _, s := range []string{
		`{"protocol_version":1,"request_id":"r1","method":"stat","params":{"path":"a"}}`,
		`{"protocol_version":1,"request_id":"r","method":"m","params":{},"x":1}`,
		`{"protocol_version":1e0,"request_id":"\u0000","method":"m","params":{"a":[1,{"b":null}]}}`,
		`{"protocol_version":1,"protocol_version":1}`,
		`[`, `"`, `{}`, ``,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, line []byte) {
		req, err := DecodeFrame(line)
		if err != nil {
			if err.Code == "" || err.Message == "" {
				t.Fatalf("untyped error %+v", err)
			}
			// Whatever was read, the error response must be a valid frame.
			b := encodeResponse(Response{RequestID: req.RequestID, Error: err})
			if !json.Valid(b) || len(b) > MaxFrame+1 {
				t.Fatalf("bad error frame %q", b)
			}
			return
		}
		// A valid request re-encodes to an equally valid request.
		b, merr := json.Marshal(req)
		if merr != nil {
			t.Fatal(merr)
		}
		again, err2 := DecodeFrame(b)
		if err2 != nil || again.RequestID != req.RequestID || again.Method != req.Method {
			t.Fatalf("round trip of %q: %+v %v", line, again, err2)
		}
	})
}
