package wire

import (
	"bytes"
	"encoding/json"
	"testing"
)

func FuzzDecodeEnvelope(f *testing.F) {
	for _, s := range []string{
		`{"type":"PING","id":"1","ts":1,"version":"1.1","payload":{}}`,
		`{"type":"FILE_READ","id":"x","payload":{"path":"a","length":null}}`,
		`{"type":"HELLO_ACK","id":"x","pending_capacity":2,"payload":null}`,
		`{"type":"","id":""}`, `[]`, `{"payload":[1]}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		e, err := DecodeEnvelope(b)
		if err != nil {
			return
		}
		if !validType(e.Type) || len(e.ID) > maxIDLen || !bytes.HasPrefix(bytes.TrimSpace(e.Payload), []byte("{")) {
			t.Fatalf("accepted a malformed envelope: %q", b)
		}
		// What was accepted re-encodes and decodes to the same envelope.
		out, err := json.Marshal(e)
		if err != nil {
			t.Fatalf("re-encode: %v", err)
		}
		e2, err := DecodeEnvelope(out)
		if err != nil || e2.Type != e.Type || e2.ID != e.ID {
			t.Fatalf("round trip: %v %+v %+v", err, e, e2)
		}
		if e.Version != "" {
			ParseVersion(e.Version)
		}
	})
}
