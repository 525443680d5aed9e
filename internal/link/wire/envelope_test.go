package wire

import (
	"encoding/json"
	"errors"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/coder/websocket"

	"github.com/hostlink/hostlink/internal/browseapi"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/procs"
	"github.com/hostlink/hostlink/internal/rootgrant"
)

func TestDecodeEnvelope(t *testing.T) {
	for _, tt := range []struct {
		name, in string
		code     errcode.Code // "" when valid
		payload  string
	}{
		{"minimal", `{"type":"PING","id":"1","ts":1,"payload":{}}`, "", `{}`},
		{"no payload", `{"type":"PING","id":"1"}`, "", `{}`},
		{"null payload", `{"type":"PING","id":"1","payload":null}`, "", `{}`},
		{"unknown fields", `{"type":"FILE_READ","id":"1","extra":[1],"payload":{"path":"a","new":true}}`, "", `{"path":"a","new":true}`},
		{"digits in type", `{"type":"V2_X","id":"1"}`, "", `{}`},
		{"not json", `hello`, CodeInvalidMessage, ""},
		{"array", `[]`, CodeInvalidMessage, ""},
		{"no type", `{"id":"1"}`, CodeInvalidMessage, ""},
		{"lower-case type", `{"type":"ping","id":"1"}`, CodeInvalidMessage, ""},
		{"leading digit", `{"type":"1PING","id":"1"}`, CodeInvalidMessage, ""},
		{"long type", `{"type":"` + strings.Repeat("A", 65) + `","id":"1"}`, CodeInvalidMessage, ""},
		{"long id", `{"type":"PING","id":"` + strings.Repeat("a", 129) + `"}`, CodeInvalidMessage, ""},
		{"payload array", `{"type":"PING","id":"1","payload":[1]}`, CodeInvalidMessage, ""},
		{"payload string", `{"type":"PING","id":"1","payload":"x"}`, CodeInvalidMessage, ""},
		{"ts string", `{"type":"PING","id":"1","ts":"now"}`, CodeInvalidMessage, ""},
	} {
		t.Run(tt.name, func(t *testing.T) {
			e, err := DecodeEnvelope([]byte(tt.in))
			if tt.code != "" {
				if errcode.CodeOf(err) != tt.code {
					t.Fatalf("got %v, want %s", err, tt.code)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if string(e.Payload) != tt.payload {
				t.Errorf("payload %s, want %s", e.Payload, tt.payload)
			}
		})
	}
}

func TestEnvelopeRoundTrip(t *testing.T) {
	e, err := NewEnvelope(TypeAck, "id-1", Version, AckPayload{OK: true})
	if err != nil {
		t.Fatal(err)
	}
	n := 3
	e.PendingCapacity = &n
	b, _ := json.Marshal(e)
	got, err := DecodeEnvelope(b)
	if err != nil {
		t.Fatal(err)
	}
	if got.Type != TypeAck || got.ID != "id-1" || got.Version != "1.1" || *got.PendingCapacity != 3 || got.TS <= 0 {
		t.Fatalf("round trip: %+v", got)
	}
	ack, err := DecodePayload[AckPayload](got)
	if err != nil || !ack.OK {
		t.Fatalf("payload: %+v %v", ack, err)
	}
	if _, err := NewEnvelope(TypePing, "x", Version, nil); err != nil {
		t.Fatal(err)
	}
}

func TestDecodePayloadTypeErrors(t *testing.T) {
	e := &Envelope{Type: TypeFileRead, Payload: json.RawMessage(`{"path":7}`)}
	_, err := DecodePayload[FileRead](e)
	if errcode.CodeOf(err) != CodeInvalidMessage {
		t.Fatalf("got %v", err)
	}
	if msg := errcode.As(err).Message; msg != `FILE_READ payload does not decode: field "path" has the wrong type` {
		t.Errorf("message %q", msg)
	}
}

func TestVersions(t *testing.T) {
	for _, tt := range []struct {
		ours, theirs, want string
		mismatch           bool
	}{
		{"1.1", "1.1", "1.1", false},
		{"1.1", "1.0", "1.0", false},
		{"1.1", "1.7", "1.1", false},
		{"1.1", "2.0", "", true},
		{"1.1", "0.9", "", true},
	} {
		o, _ := ParseVersion(tt.ours)
		th, err := ParseVersion(tt.theirs)
		if err != nil {
			t.Fatal(err)
		}
		v, err := Negotiate(o, th)
		var mm *ErrMajorMismatch
		if tt.mismatch != errors.As(err, &mm) {
			t.Fatalf("%s vs %s: %v", tt.ours, tt.theirs, err)
		}
		if !tt.mismatch && v.String() != tt.want {
			t.Errorf("%s vs %s: %s, want %s", tt.ours, tt.theirs, v, tt.want)
		}
	}
	for _, bad := range []string{"", "1", "1.", ".1", "a.b", "1.1.1", "12345.1", "-1.0", "1.+1"} {
		if _, err := ParseVersion(bad); err == nil {
			t.Errorf("ParseVersion(%q) accepted", bad)
		}
	}
}

func TestTerminalCodes(t *testing.T) {
	for code := 4425; code <= 4430; code++ {
		want := code >= 4426 && code <= 4429
		if Terminal(websocket.StatusCode(code)) != want {
			t.Errorf("Terminal(%d) != %v", code, want)
		}
	}
	if Terminal(1000) || Terminal(1011) {
		t.Error("IETF codes must reconnect")
	}
}

func TestEncodeMatchesMarshal(t *testing.T) {
	n := 0
	for _, e := range []*Envelope{
		{Type: "ACK", ID: "a\"b<", TS: 1712345678.123, Version: "1.1", Payload: json.RawMessage(`{"ok":true}`)},
		{Type: "PING", ID: "", TS: 0, Payload: nil},
		{Type: "STATUS", ID: "x", TS: 1e-7, Version: "1.1", PendingCapacity: &n, Payload: json.RawMessage(`{}`)},
	} {
		got, err := e.Encode()
		if err != nil {
			t.Fatal(err)
		}
		var a, b map[string]any
		if err := json.Unmarshal(got, &a); err != nil {
			t.Fatalf("Encode gave invalid JSON %s: %v", got, err)
		}
		want, _ := json.Marshal(e)
		json.Unmarshal(want, &b)
		if e.Payload == nil {
			b["payload"] = map[string]any{}
		}
		if !reflect.DeepEqual(a, b) {
			t.Errorf("Encode %s, json.Marshal %s", got, want)
		}
	}
}

// The packages that raise protocol codes use the protocol's strings.
func TestOwnersUseWireCodes(t *testing.T) {
	for _, c := range []errcode.Code{
		rootgrant.GrantInvalid, rootgrant.DirectoryUnavailable, rootgrant.SessionNotAttached,
		rootgrant.SessionAlreadyActive, rootgrant.RevisionMismatch, procs.ShellNotAvailable,
		browseapi.ReferenceInvalid,
	} {
		if !slices.Contains(errcode.Wire, c) {
			t.Errorf("%s is not a wire code", c)
		}
	}
}

func TestVersionMismatchReason(t *testing.T) {
	r := VersionMismatchReason("1.1", "2.0")
	var m map[string]string
	if err := json.Unmarshal([]byte(r), &m); err != nil || m["error"] != "PROTOCOL_VERSION_MISMATCH" || m["shim_max"] != "1.1" || m["platform_max"] != "2.0" || m["hint"] == "" {
		t.Fatalf("%s: %v", r, err)
	}
	if long := VersionMismatchReason("1.1", strings.Repeat("9", 100)); len(long) > 123 {
		t.Fatalf("%d bytes: too long for a close frame", len(long))
	}
}
