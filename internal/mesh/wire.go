package mesh

import (
	"bytes"
	"encoding/base64"
	"encoding/json"

	"github.com/hostlink/hostlink/internal/errcode"
)

// Reply is an executor's answer: the operation's result or its error.
type Reply struct {
	Result json.RawMessage `json:"result,omitempty"`
	Error  *errcode.Error  `json:"error,omitempty"`
	// Replayed: the outcome was recorded for the request's idempotency
	// key and is sent again, not run again.
	Replayed bool `json:"replayed,omitempty"`
}

// jsonAppender is a result that encodes itself, faster than
// encoding/json and to the same bytes (fileapi.ReadFileResult).
type jsonAppender interface {
	AppendJSON(b []byte) ([]byte, error)
}

// encodeResult is out's JSON, without HTML escaping.
func encodeResult(out any) ([]byte, error) {
	if a, ok := out.(jsonAppender); ok {
		return a.AppendJSON(nil)
	}
	var b bytes.Buffer
	e := json.NewEncoder(&b)
	e.SetEscapeHTML(false)
	if err := e.Encode(out); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// encodeReply is the reply carrying result (already JSON) or err.
func encodeReply(result []byte, err error, replayed bool) []byte {
	var r Reply
	if err != nil {
		r.Error = errcode.As(err)
	} else {
		r.Result = result
	}
	r.Replayed = replayed
	b, merr := json.Marshal(r)
	if merr != nil {
		b, _ = json.Marshal(Reply{Error: errcode.New(errcode.Internal, "internal error")})
	}
	return b
}

func encodeSig(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

func decodeSig(s string) ([]byte, error) { return base64.RawURLEncoding.DecodeString(s) }
