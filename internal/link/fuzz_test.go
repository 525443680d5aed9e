package link

import (
	"testing"

	"github.com/hostlink/hostlink/internal/link/wire"
)

// payloadDecoders decode a payload as each request or reply type hostlink
// reads; the fuzzers feed them arbitrary bytes.
var payloadDecoders = map[string]func(*wire.Envelope) error{
	wire.TypeHello:             func(e *wire.Envelope) error { _, err := wire.DecodePayload[wire.Hello](e); return err },
	wire.TypeHelloAck:          func(e *wire.Envelope) error { _, err := wire.DecodePayload[wire.HelloAck](e); return err },
	wire.TypeError:             func(e *wire.Envelope) error { _, err := wire.DecodePayload[wire.ErrorPayload](e); return err },
	wire.TypeAck:               func(e *wire.Envelope) error { _, err := wire.DecodePayload[wire.AckPayload](e); return err },
	wire.TypeStatus:            func(e *wire.Envelope) error { _, err := wire.DecodePayload[wire.Status](e); return err },
	wire.TypeSessionRevoked:    func(e *wire.Envelope) error { _, err := wire.DecodePayload[wire.SessionRevoked](e); return err },
	wire.TypeFileRead:          func(e *wire.Envelope) error { _, err := wire.DecodePayload[wire.FileRead](e); return err },
	wire.TypeFileWrite:         func(e *wire.Envelope) error { _, err := wire.DecodePayload[wire.FileWrite](e); return err },
	wire.TypeFileStat:          func(e *wire.Envelope) error { _, err := wire.DecodePayload[wire.FileStat](e); return err },
	wire.TypeFileList:          func(e *wire.Envelope) error { _, err := wire.DecodePayload[wire.FileList](e); return err },
	wire.TypeFileDelete:        func(e *wire.Envelope) error { _, err := wire.DecodePayload[wire.FileDelete](e); return err },
	wire.TypeFileMove:          func(e *wire.Envelope) error { _, err := wire.DecodePayload[wire.FileMove](e); return err },
	wire.TypeExecuteCommand:    func(e *wire.Envelope) error { _, err := wire.DecodePayload[wire.ExecuteCommand](e); return err },
	wire.TypeOperationCall:     func(e *wire.Envelope) error { _, err := wire.DecodePayload[wire.OperationCall](e); return err },
	wire.TypeScreenshotRequest: func(e *wire.Envelope) error { _, err := wire.DecodePayload[wire.ScreenshotRequest](e); return err },
	wire.TypeInputAction:       func(e *wire.Envelope) error { _, err := wire.DecodePayload[wire.InputAction](e); return err },
	"IDEMPOTENT":               func(e *wire.Envelope) error { _, err := wire.DecodePayload[wire.Idempotent](e); return err },
	"REQUEST_HASH":             func(e *wire.Envelope) error { _, err := requestHash(e); return err },
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
				dec(&wire.Envelope{Type: name, Payload: b})
			}()
		}
	})
}
