package rootgrant

import (
	"bytes"
	"encoding/json"

	"github.com/hostlink/hostlink/internal/errcode"
)

// Payloads of the session-root messages on the control channel, with the
// wire protocol's JSON field names. Requests are decoded by the Decode
// functions below, which refuse missing or malformed fields with
// INVALID_ARGUMENT and tolerate unknown fields (forward-compatible
// additions within protocol major 1).

// AttachRequest is ATTACH_SESSION's payload. ExpectedConnectionID is carried
// for the platform's race detection; the host ignores it, because browse
// references die with the control connection anyway.
type AttachRequest struct {
	SessionID            string  `json:"session_id"`
	BrowseID             string  `json:"browse_id"`
	DirectoryRef         string  `json:"directory_ref"`
	ExpectedConnectionID *string `json:"expected_connection_id"`
}

// Attached is SESSION_ATTACHED's payload, and with the grant also
// SESSION_RESTORED's.
type Attached struct {
	SessionID   string `json:"session_id"`
	AllowedRoot string `json:"allowed_root"`
	Fingerprint string `json:"fingerprint"`
	Revision    int64  `json:"revision"`
	RootGrant   string `json:"root_grant"`
}

// ActivateRequest is ACTIVATE_SESSION's payload.
type ActivateRequest struct {
	SessionID string `json:"session_id"`
	Revision  int64  `json:"revision"`
}

// Activated is SESSION_ACTIVATED's payload.
type Activated struct {
	SessionID   string `json:"session_id"`
	AllowedRoot string `json:"allowed_root"`
	Fingerprint string `json:"fingerprint"`
	Revision    int64  `json:"revision"`
}

// RestoreRequest is RESTORE_SESSION's payload.
type RestoreRequest struct {
	SessionID string `json:"session_id"`
	RootGrant string `json:"root_grant"`
}

// DetachRequest is DETACH_SESSION's payload; the reply is a plain ACK.
type DetachRequest struct {
	SessionID string `json:"session_id"`
}

// Bounds on request fields. MaxOpaqueLen bounds expected_connection_id. A
// grant for a root near the OS's path limit (32,767 UTF-16 units on Windows,
// escaped in JSON, then base64) stays under MaxGrantLen.
const (
	MaxSessionIDLen = 128
	MaxOpaqueLen    = 256
	MaxGrantLen     = 256 << 10
)

// ValidSessionID reports, as an INVALID_ARGUMENT error, whether id is
// unusable as a session id: empty, longer than MaxSessionIDLen, or holding
// anything but ASCII letters, digits and "-._~". Session ids become a path
// segment of the data endpoint's URL and a key in hostlink's state, so they
// are held to characters that need no escaping anywhere.
func ValidSessionID(id string) error {
	if id == "" || len(id) > MaxSessionIDLen {
		return errcode.New(errcode.InvalidArgument, "session_id must be 1 to %d characters", MaxSessionIDLen)
	}
	for i := 0; i < len(id); i++ {
		c := id[i]
		ok := 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' ||
			c == '-' || c == '.' || c == '_' || c == '~'
		if !ok {
			return errcode.New(errcode.InvalidArgument, "session_id may hold only letters, digits and - . _ ~")
		}
	}
	return nil
}

// DecodeAttach decodes and checks an ATTACH_SESSION payload. The browse id
// and reference are judged by browse.Service.Consume, which answers
// DIRECTORY_REFERENCE_INVALID for a malformed or unknown pair.
func DecodeAttach(data []byte) (AttachRequest, error) {
	var r AttachRequest
	if err := decodeObject(data, &r); err != nil {
		return AttachRequest{}, err
	}
	if err := ValidSessionID(r.SessionID); err != nil {
		return AttachRequest{}, err
	}
	if r.ExpectedConnectionID != nil && len(*r.ExpectedConnectionID) > MaxOpaqueLen {
		return AttachRequest{}, errcode.New(errcode.InvalidArgument, "expected_connection_id is longer than %d bytes", MaxOpaqueLen)
	}
	return r, nil
}

// DecodeActivate decodes and checks an ACTIVATE_SESSION payload.
func DecodeActivate(data []byte) (ActivateRequest, error) {
	var r ActivateRequest
	if err := decodeObject(data, &r); err != nil {
		return ActivateRequest{}, err
	}
	if err := ValidSessionID(r.SessionID); err != nil {
		return ActivateRequest{}, err
	}
	if r.Revision < 1 {
		return ActivateRequest{}, errcode.New(errcode.InvalidArgument, "revision must be a positive integer")
	}
	return r, nil
}

// DecodeRestore decodes and checks a RESTORE_SESSION payload. It checks the
// grant's size only; Signer.Verify judges its content.
func DecodeRestore(data []byte) (RestoreRequest, error) {
	var r RestoreRequest
	if err := decodeObject(data, &r); err != nil {
		return RestoreRequest{}, err
	}
	if err := ValidSessionID(r.SessionID); err != nil {
		return RestoreRequest{}, err
	}
	if r.RootGrant == "" || len(r.RootGrant) > MaxGrantLen {
		return RestoreRequest{}, errcode.New(GrantInvalid, "root_grant is missing or too long")
	}
	return r, nil
}

// DecodeDetach decodes and checks a DETACH_SESSION payload.
func DecodeDetach(data []byte) (DetachRequest, error) {
	var r DetachRequest
	if err := decodeObject(data, &r); err != nil {
		return DetachRequest{}, err
	}
	if err := ValidSessionID(r.SessionID); err != nil {
		return DetachRequest{}, err
	}
	return r, nil
}

// decodeObject unmarshals a JSON object into v. A payload that is not an
// object (null, an array, a string) or has a field of the wrong type is
// INVALID_ARGUMENT; the decoder's own message is not passed on.
func decodeObject(data []byte, v any) error {
	data = bytes.TrimSpace(data)
	if len(data) == 0 || data[0] != '{' {
		return errcode.New(errcode.InvalidArgument, "payload must be a JSON object")
	}
	if err := json.Unmarshal(data, v); err != nil {
		return errcode.New(errcode.InvalidArgument, "payload does not match the message's schema")
	}
	return nil
}
