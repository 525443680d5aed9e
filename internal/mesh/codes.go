package mesh

import "github.com/hostlink/hostlink/internal/errcode"

// Codes of the mesh. Each is answered to the caller as the error of its
// call and, on the executor, recorded in the audit log.
const (
	// CodeExecutorOffline: no executor serves the machine now (the bus
	// has no responder for its subject). Nothing was queued.
	CodeExecutorOffline errcode.Code = "EXECUTOR_OFFLINE"
	// CodeUnknownMachine: no machine of that name or key is known.
	CodeUnknownMachine errcode.Code = "UNKNOWN_MACHINE"
	// CodeAssertionInvalid: the request's signed assertion is missing,
	// malformed, not signed by the key it names, or does not match the
	// request (machine, operation, body hash).
	CodeAssertionInvalid errcode.Code = "MESH_ASSERTION_INVALID"
	// CodeCallerUnknown: the assertion is signed by a key the machine's
	// local user has not enrolled as a caller.
	CodeCallerUnknown errcode.Code = "MESH_CALLER_UNKNOWN"
	// CodeClockSkew: the assertion's issue time is ahead of the
	// executor's clock, or it expired, by more than the allowed skew;
	// details say both times.
	CodeClockSkew errcode.Code = "CLOCK_SKEW"
	// CodeReplay: an assertion's nonce was seen before.
	CodeReplay errcode.Code = "MESH_REPLAY"
	// CodePayloadTooLarge: a request or reply is over the bus's
	// negotiated maximum payload (details.max_payload).
	CodePayloadTooLarge errcode.Code = "PAYLOAD_TOO_LARGE"
	// CodeTimeout: the executor did not answer within the caller's
	// deadline; for a mutation the outcome is unknown.
	CodeTimeout errcode.Code = "MESH_TIMEOUT"
	// CodeBusy: the executor is running as many mesh calls as it allows,
	// or its replay cache is full; retry later.
	CodeBusy errcode.Code = "MESH_BUSY"
	// CodeSlowConsumer: replies to the caller arrived faster than it
	// took them and the bus client dropped some (a slow consumer) while
	// the call waited: its reply may be among them, so for a mutation
	// the outcome is unknown (resend with the same idempotency key).
	CodeSlowConsumer errcode.Code = "MESH_SLOW_CONSUMER"
	// CodeUnavailable: the caller has no connection to the bus.
	CodeUnavailable errcode.Code = "MESH_UNAVAILABLE"
	// CodeIdempotencyUnknown: a mutation with this idempotency key was
	// started and its outcome was never recorded (the executor stopped
	// while it ran): it is not run again.
	CodeIdempotencyUnknown errcode.Code = "IDEMPOTENCY_OUTCOME_UNKNOWN"
	// CodeIdempotencyConflict: the idempotency key was used for another
	// request.
	CodeIdempotencyConflict errcode.Code = "IDEMPOTENCY_KEY_REUSED"
)
