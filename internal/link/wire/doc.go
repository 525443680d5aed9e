// Package wire is the Local PC Executor protocol v1.1 as it travels: the
// envelope, the message types and their payloads, the protocol's version
// negotiation and close codes, and one WebSocket connection carrying
// envelopes. It holds no behaviour beyond encoding, so that both ends
// (hostlink's link client and the development platform in
// internal/devplatform) share it. docs/PROTOCOL.md is the contract.
package wire
