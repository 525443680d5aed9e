// Package ops is hostlink's operation registry: the one place where every
// capability is declared, with its typed request and response, its JSON
// schemas, its read-only and destructive flags, and its handler.
//
// Transports (MCP, the platform link, the local control channel) are thin
// adapters over Registry.Call. Whatever transport a call comes from, it goes
// the same way: lookup, audit health check, schema validation, strict
// decoding, policy, handler, audit record. Nothing in that chain is repeated
// per transport.
package ops
