// Package link connects hostlink out to a platform that speaks the Local PC
// Executor WebSocket protocol v1.1: one control connection for the
// directory browser and session management, and one data connection per
// active session, each jailed to the session's attached root.
//
// The link is a thin adapter. One table (routes.go) maps every request
// type onto the capability it needs and the registry operation it
// becomes; the converters next to it turn the wire payload (package wire)
// into the operation's typed request and its typed result back into the
// reply, through ops.Registry.CallValue, so policy, bounds, budgets and
// the audit record happen once, in the core. A request the link refuses
// before it reaches an operation is recorded through Registry.Refuse. The
// link adds only what the wire needs: the envelope, version negotiation,
// granted capabilities, the max_concurrent semaphore, keepalive,
// reconnect with backoff, and (for platforms that grant it) exactly-once
// execution of mutating requests that carry an idempotency key.
package link
