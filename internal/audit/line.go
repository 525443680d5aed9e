package audit

import (
	"bytes"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// tsLayout is RFC 3339 with all nine fractional digits, so that every ts
// has the same width and sorts as text.
const tsLayout = "2006-01-02T15:04:05.000000000Z07:00"

// entry is a line without its MAC. Its fields are declared in sorted JSON
// key order, so encoding/json's output for it is canonical as long as
// Details is (see canonicalDetails).
type entry struct {
	Bytes      int64           `json:"bytes"`
	Code       string          `json:"code"`
	Details    json.RawMessage `json:"details"`
	DurationMS int64           `json:"duration_ms"`
	MachineID  string          `json:"machine_id"`
	Op         string          `json:"op"`
	Paths      []string        `json:"paths"`
	Peer       string          `json:"peer"`
	PrevMAC    string          `json:"prev_mac"`
	RequestID  string          `json:"request_id"`
	Seq        uint64          `json:"seq"`
	Transport  string          `json:"transport"`
	TS         string          `json:"ts"`
	Version    string          `json:"version"`
	Workdir    string          `json:"workdir"`
}

// macPrefix and macSuffix surround the hex MAC at the end of every line.
const (
	macPrefix = `,"mac":"`
	macSuffix = "\"}\n"
	macHexLen = 2 * sha256.Size
)

// encode returns e's line, newline included, and its hex MAC.
func (e *entry) encode(key []byte) (line []byte, mac string, err error) {
	body, err := json.Marshal(e)
	if err != nil {
		return nil, "", err
	}
	mac = sign(key, body)
	line = make([]byte, 0, len(body)+len(macPrefix)+macHexLen+len(macSuffix)-1)
	line = append(line, body[:len(body)-1]...) // drop the closing brace
	line = append(line, macPrefix...)
	line = append(line, mac...)
	line = append(line, macSuffix...)
	return line, mac, nil
}

func sign(key, body []byte) string {
	h := hmac.New(sha256.New, key)
	h.Write(body)
	return hex.EncodeToString(h.Sum(nil))
}

// canonicalDetails returns details as canonical JSON: "{}" when empty, and
// otherwise re-encoded through generic values, so that the keys of nested
// structs and maps come out sorted too.
func canonicalDetails(details map[string]any) (json.RawMessage, error) {
	if len(details) == 0 {
		return json.RawMessage("{}"), nil
	}
	b, err := json.Marshal(details)
	if err != nil {
		return nil, err
	}
	return canonicalize(b)
}

// canonicalize re-encodes one JSON value with sorted keys, no whitespace
// and Go's string escaping. Numbers keep their literal text.
func canonicalize(b []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("trailing data after JSON value")
	}
	return json.Marshal(v)
}

// splitLine splits a line (without its newline) into the signed body, the
// canonical object without "mac", and the hex MAC.
func splitLine(line []byte) (body []byte, mac string, ok bool) {
	n := len(line) - len(macPrefix) - macHexLen - len(`"}`)
	if n < 1 || line[0] != '{' ||
		string(line[n:n+len(macPrefix)]) != macPrefix ||
		string(line[len(line)-2:]) != `"}` {
		return nil, "", false
	}
	mac = string(line[n+len(macPrefix) : len(line)-2])
	body = append(line[:n:n], '}')
	return body, mac, true
}

// decodeBody parses a signed body and checks that it is canonical, which
// is what the writer produces and what a verifier that re-canonicalises
// the parsed object relies on.
func decodeBody(body []byte) (*entry, error) {
	var e entry
	if err := json.Unmarshal(body, &e); err != nil {
		return nil, err
	}
	// Re-encoding catches unknown, duplicate, missing or mis-cased keys,
	// which Unmarshal tolerates, and any non-canonical spelling.
	details, err := canonicalize(e.Details)
	if err != nil {
		return nil, fmt.Errorf("details: %w", err)
	}
	if !bytes.Equal(details, e.Details) {
		return nil, errors.New("details are not canonical JSON")
	}
	again, err := json.Marshal(&e)
	if err != nil {
		return nil, err
	}
	if !bytes.Equal(again, body) {
		return nil, errors.New("not canonical JSON with the expected keys")
	}
	return &e, nil
}

// verifyLine parses line (without its newline) and checks its MAC with
// key. It does not check the chain.
func verifyLine(key, line []byte) (*entry, string, *Failure) {
	body, mac, ok := splitLine(line)
	if !ok {
		return nil, "", &Failure{Reason: ReasonUnparsable, Detail: `does not end in a "mac" field`}
	}
	e, err := decodeBody(body)
	if err != nil {
		return nil, "", &Failure{Reason: ReasonUnparsable, Detail: err.Error()}
	}
	if !hmac.Equal([]byte(mac), []byte(sign(key, body))) {
		return nil, "", &Failure{Reason: ReasonBadMAC, Detail: "MAC does not match: the record was altered, or the key is not the one that wrote it"}
	}
	return e, mac, nil
}
