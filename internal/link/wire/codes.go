package wire

import "github.com/hostlink/hostlink/internal/errcode"

// Codes hostlink adds to the wire for its own additions; the protocol's
// own codes are errcode.Wire.
const (
	// CodeFrameTooLarge: a frame exceeded MaxFrameBytes; it was discarded
	// and the connection kept.
	CodeFrameTooLarge errcode.Code = "FRAME_TOO_LARGE"
	// CodeInvalidMessage: a frame is not a valid envelope, or its payload
	// does not decode as its type's.
	CodeInvalidMessage errcode.Code = "INVALID_MESSAGE"
	// CodeIdempotencyKeyReused: an idempotency key was sent again with a
	// different request.
	CodeIdempotencyKeyReused errcode.Code = "IDEMPOTENCY_KEY_REUSED"
	// CodeOutcomeUnknown: a request with this idempotency key was started
	// by a hostlink that stopped before recording its result; it may or may
	// not have taken effect, and is not run again.
	CodeOutcomeUnknown errcode.Code = "IDEMPOTENCY_OUTCOME_UNKNOWN"
)
