// Package mesh puts hostlink executors on a NATS bus, so that one
// gateway can reach a fleet of machines while each keeps its own policy,
// approvals, sandbox and audit log.
//
// An executor (hostlink serve with [mesh] enabled) connects out to the
// bus as its own NATS user and serves the operation registry through the
// NATS micro services API on its own subjects, hl.v1.<machine key>.<op>
// (Subject). Every request carries a short-lived assertion signed by the
// caller's NKey (Assertion): the executor verifies it against the caller
// keys its local user enrolled, refuses replays, and only then hands the
// call to the registry, transport mesh, like every other transport's.
// The bus's permissions keep machines off each other's subjects; the
// assertions keep a compromised bus from widening what a machine allows.
//
// The package holds what both sides share (subjects, assertions, the
// reply envelope, error codes), the executor, and the caller (Client)
// that gateways and tools use. The hub (an embedded nats-server and the
// credentials it issues) is package meshhub; the gateway is meshgw.
package mesh
