// Package link connects hostlink out to a platform that speaks the Local PC
// Executor WebSocket protocol v1.1: one control connection for the
// directory browser and session management, and one data connection per
// active session, each jailed to the session's attached root.
//
// Every data-channel request is a thin mapping onto an operation of an
// ops.Registry, so policy, limits and audit happen once, in the core. The
// link adds only what the wire needs: the envelope, version negotiation,
// granted capabilities, the max_concurrent semaphore, keepalive, reconnect
// with backoff, and (for platforms that grant it) exactly-once execution of
// mutating requests that carry an idempotency key.
package link
