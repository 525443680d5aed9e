package link

import (
	"bytes"
	"encoding/json"
	"testing"
)

// payloadDecoders decode a payload as each request or reply type hostlink
// reads; the fuzzers feed them arbitrary bytes.
var payloadDecoders = map[string]func(*Envelope) error{
	TypeHello:             func(e *Envelope) error { _, err := DecodePayload[Hello](e); return err },
	TypeHelloAck:          func(e *Envelope) error { _, err := DecodePayload[HelloAck](e); return err },
	TypeError:             func(e *Envelope) error { _, err := DecodePayload[ErrorPayload](e); return err },
	TypeAck:               func(e *Envelope) error { _, err := DecodePayload[AckPayload](e); return err },
	TypeStatus:            func(e *Envelope) error { _, err := DecodePayload[Status](e); return err },
	TypeSessionRevoked:    func(e *Envelope) error { _, err := DecodePayload[SessionRevoked](e); return err },
	TypeFileRead:          func(e *Envelope) error { _, err := DecodePayload[FileRead](e); return err },
	TypeFileWrite:         func(e *Envelope) error { _, err := DecodePayload[FileWrite](e); return err },
	TypeFileStat:          func(e *Envelope) error { _, err := DecodePayload[FileStat](e); return err },
	TypeFileList:          func(e *Envelope) error { _, err := DecodePayload[FileList](e); return err },
	TypeFileDelete:        func(e *Envelope) error { _, err := DecodePayload[FileDelete](e); return err },
	TypeFileMove:          func(e *Envelope) error { _, err := DecodePayload[FileMove](e); return err },
	TypeExecuteCommand:    func(e *Envelope) error { _, err := DecodePayload[ExecuteCommand](e); return err },
	TypeOperationCall:     func(e *Envelope) error { _, err := DecodePayload[OperationCall](e); return err },
	TypeScreenshotRequest: func(e *Envelope) error { _, err := DecodePayload[ScreenshotRequest](e); return err },
	TypeInputAction:       func(e *Envelope) error { _, err := DecodePayload[InputAction](e); return err },
	"IDEMPOTENT":          func(e *Envelope) error { _, err := DecodePayload[Idempotent](e); return err },
	"REQUEST_HASH":        func(e *Envelope) error { _, err := requestHash(e); return err },
}

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

func FuzzPayloadDecoders(f *testing.F) {
	for _, s := range []string{
		`{}`, `{"path":"a","encoding":"base64","format":"bytes","offset":3,"length":4}`,
		`{"command":"ls","argv":null,"shell":"auto","env":{"A":"b"},"timeout_seconds":1.5,"idempotency_key":"k"}`,
		`{"session_id":null,"connection_id":"c","protocol_version":"1.1","granted_capabilities":["files"],"max_file_size_bytes":1,"command_timeout_seconds":30,"max_concurrent":4}`,
		`{"op":"read_command_output","args":{"capture_id":"x"}}`, `{"path":1}`, `{"glob":null,"max_entries":-1}`,
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		for name, dec := range payloadDecoders {
			func() {
				defer func() {
					if p := recover(); p != nil {
						t.Fatalf("%s decoder panicked on %q: %v", name, b, p)
					}
				}()
				dec(&Envelope{Type: name, Payload: b})
			}()
		}
	})
}
