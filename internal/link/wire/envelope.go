package wire

import (
	"bytes"
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"github.com/hostlink/hostlink/internal/textsafe"
	"strconv"
	"strings"
	"time"

	"github.com/hostlink/hostlink/internal/errcode"
)

// MaxFrameBytes is the largest WebSocket message either side accepts, the
// platform relay's envelope cap. A larger frame is discarded and refused
// with FRAME_TOO_LARGE; the connection stays up.
const MaxFrameBytes = 16 << 20

// Version is the wire-protocol version hostlink speaks at most.
var Version = ProtoVersion{Major: 1, Minor: 1}

// DefaultPeerVersion is the protocol_version of a HELLO or HELLO_ACK that
// leaves it out: upstream's models read a missing one as 1.1.
var DefaultPeerVersion = ProtoVersion{Major: 1, Minor: 1}

// Envelope is one wire message.
type Envelope struct {
	Type    string  `json:"type"`
	ID      string  `json:"id"`
	TS      float64 `json:"ts"`
	Version string  `json:"version,omitempty"`
	// PendingCapacity is set on responses: free request slots after this
	// one is sent.
	PendingCapacity *int            `json:"pending_capacity,omitempty"`
	Payload         json.RawMessage `json:"payload"`
}

// Limits on envelope fields, so a peer cannot make hostlink keep or log
// arbitrarily large identifiers.
const (
	maxTypeLen = 64
	maxIDLen   = 128
)

// DecodeEnvelope parses one frame. It checks the envelope's shape only: a
// known type is the dispatcher's business. A missing or null payload reads
// as an empty object.
func DecodeEnvelope(b []byte) (*Envelope, error) {
	var e Envelope
	if err := json.Unmarshal(b, &e); err != nil {
		return nil, errcode.New(CodeInvalidMessage, "frame is not a JSON envelope")
	}
	if !validType(e.Type) {
		return nil, errcode.New(CodeInvalidMessage, "envelope type is missing or malformed")
	}
	if len(e.ID) > maxIDLen {
		return nil, errcode.New(CodeInvalidMessage, "envelope id is longer than %d bytes", maxIDLen)
	}
	p := bytes.TrimSpace(e.Payload)
	switch {
	case len(p) == 0 || string(p) == "null":
		e.Payload = json.RawMessage("{}")
	case p[0] != '{':
		return nil, errcode.New(CodeInvalidMessage, "envelope payload is not an object")
	}
	return &e, nil
}

// validType reports whether t is an upper-case wire message type.
func validType(t string) bool {
	if t == "" || len(t) > maxTypeLen {
		return false
	}
	for i := 0; i < len(t); i++ {
		c := t[i]
		switch {
		case c >= 'A' && c <= 'Z', c == '_':
		case c >= '0' && c <= '9' && i > 0:
		default:
			return false
		}
	}
	return true
}

// NewEnvelope builds an envelope around payload, which must marshal to a
// JSON object.
func NewEnvelope(typ, id string, v ProtoVersion, payload any) (*Envelope, error) {
	raw, err := json.Marshal(payload)
	if err != nil {
		return nil, err
	}
	if string(raw) == "null" {
		raw = json.RawMessage("{}")
	}
	return &Envelope{Type: typ, ID: id, TS: Now(), Version: v.String(), Payload: raw}, nil
}

// Encode returns the envelope's JSON. The payload is written as it is, not
// re-compacted as json.Marshal would: it came from json.Marshal or a
// decoded frame, so it is already valid, and for a large file's content
// the re-scan costs more than the encoding itself.
func (e *Envelope) Encode() ([]byte, error) {
	p := e.Payload
	if len(p) == 0 {
		p = json.RawMessage("{}")
	}
	typ, err1 := json.Marshal(e.Type)
	id, err2 := json.Marshal(e.ID)
	ver, err3 := json.Marshal(e.Version)
	if err := errors.Join(err1, err2, err3); err != nil {
		return nil, err
	}
	b := make([]byte, 0, len(p)+len(typ)+len(id)+len(ver)+96)
	b = append(b, `{"type":`...)
	b = append(b, typ...)
	b = append(b, `,"id":`...)
	b = append(b, id...)
	b = append(b, `,"ts":`...)
	b = strconv.AppendFloat(b, e.TS, 'f', -1, 64)
	if e.Version != "" {
		b = append(b, `,"version":`...)
		b = append(b, ver...)
	}
	if e.PendingCapacity != nil {
		b = append(b, `,"pending_capacity":`...)
		b = strconv.AppendInt(b, int64(*e.PendingCapacity), 10)
	}
	b = append(b, `,"payload":`...)
	b = append(b, p...)
	return append(b, '}'), nil
}

// Now is the envelope timestamp: seconds since the Unix epoch.
func Now() float64 {
	return float64(time.Now().UnixMicro()) / 1e6
}

// DecodePayload decodes an envelope's payload into T. Unknown fields are
// ignored: both sides must tolerate additions within a major version.
func DecodePayload[T any](e *Envelope) (T, error) {
	var v T
	if err := json.Unmarshal(e.Payload, &v); err != nil {
		return v, errcode.New(CodeInvalidMessage, "%s payload does not decode: %s", e.Type, jsonProblem(err))
	}
	return v, nil
}

// jsonProblem describes a decode error without echoing the input.
func jsonProblem(err error) string {
	switch e := err.(type) {
	case *json.UnmarshalTypeError:
		return fmt.Sprintf("field %q has the wrong type", e.Field)
	case *json.SyntaxError:
		return "malformed JSON"
	}
	return "malformed payload"
}

// ProtoVersion is a "major.minor" wire-protocol version.
type ProtoVersion struct{ Major, Minor int }

func (v ProtoVersion) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// ParseVersion parses "major.minor" (each at most four digits).
func ParseVersion(s string) (ProtoVersion, error) {
	maj, min, ok := strings.Cut(s, ".")
	if !ok {
		return ProtoVersion{}, fmt.Errorf("version %q is not major.minor", textsafe.Clip(s, 16))
	}
	a, err1 := parseSmall(maj)
	b, err2 := parseSmall(min)
	if err1 != nil || err2 != nil {
		return ProtoVersion{}, fmt.Errorf("version %q is not major.minor", textsafe.Clip(s, 16))
	}
	return ProtoVersion{a, b}, nil
}

func parseSmall(s string) (int, error) {
	if s == "" || len(s) > 4 {
		return 0, fmt.Errorf("bad number")
	}
	for _, c := range s {
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("bad number")
		}
	}
	return strconv.Atoi(s)
}

// ErrMajorMismatch is returned by Negotiate for different majors.
type ErrMajorMismatch struct{ Ours, Theirs ProtoVersion }

func (e *ErrMajorMismatch) Error() string {
	return fmt.Sprintf("protocol major version mismatch: hostlink speaks %s, peer %s", e.Ours, e.Theirs)
}

// Negotiate returns the effective version for two maxima: the same major
// and the lower minor. Different majors cannot talk.
func Negotiate(ours, theirs ProtoVersion) (ProtoVersion, error) {
	if ours.Major != theirs.Major {
		return ProtoVersion{}, &ErrMajorMismatch{ours, theirs}
	}
	return ProtoVersion{ours.Major, min(ours.Minor, theirs.Minor)}, nil
}

// NewID returns a random UUID v4 for envelope ids.
func NewID() string {
	var b [16]byte
	rand.Read(b[:])
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
