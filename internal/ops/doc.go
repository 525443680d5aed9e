// Package ops is hostlink's operation registry: the one place where every
// capability is declared, with its typed request and response, its JSON
// schemas, its policy class, the transports that may call it, its limits
// and its handler.
//
// Transports (MCP on stdio and HTTP, the platform link, the local control
// channel, the web console) are thin adapters over Registry.Call (JSON
// arguments) or Registry.CallValue (a request the transport built itself).
// Whatever transport a call comes from, it goes the same way: audit health
// check, lookup (an operation its spec does not offer on the caller's
// transport does not exist there), schema validation, strict decoding,
// the connection's bounds, normalizing (RegisterNormalized), policy (the
// operation describes the request: Op.Describe), budgets, handler, audit
// record (naming what the request touches: Targeted). Nothing in that chain is repeated per transport,
// and a transport that refuses a request before it reaches an operation
// records that through Registry.Refuse.
//
// An operation is one file in its package: its description (a function
// registered with it, or its request's Describe method), its handler and
// its Register call with an ops.Spec; its request and response types are
// in the capability's types-only package (internal/fileapi,
// internal/commandapi, internal/desktopapi, internal/agentapi,
// internal/companionapi, internal/browseapi; the local user's controls'
// requests in internal/apitype). See "Adding an operation" in
// docs/DESIGN.md.
package ops
