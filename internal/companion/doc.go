// Package companion lets a hostlink that runs where the user's desktop is
// not (in a Docker container, in a WSL distro) reach that desktop and run
// commands on the host through a second hostlink, the companion, running
// in the host's graphical login.
//
// Who listens: the runtime (the hostlink in the container) listens on a
// loopback address ([companion] listen); the companion dials it
// (hostlink companion --runtime 127.0.0.1:PORT). A container publishes the
// port on the host's loopback only, so nothing on the host listens on
// another interface, and the companion, which holds the user's desktop,
// never accepts connections at all.
//
// Transport: one WebSocket (github.com/coder/websocket) per companion,
// binary messages only. Each message is a frame: a 4-byte big-endian
// header length, a JSON header (request or response, id, method, params,
// typed error) and raw payload bytes. Payloads carry command output and
// screen pixels in chunks of at most 64 KiB, so bytes never travel inside
// JSON text. WebSocket rather than a bare TCP framing because it gives
// message boundaries, ping and close codes with a library the link already
// uses, and an HTTP upgrade that a stray non-hostlink client cannot
// complete by accident. The connection is plain (no TLS): it is loopback
// only, or Docker's loopback-published port forwarding.
//
// Pairing: the runtime prints a short-lived single-use code (hostlink
// companion pair-code); the user runs hostlink companion pair on the host
// with it, which exchanges it for a companion id and a 256-bit secret. The
// companion keeps them in its credential store; the runtime keeps only the
// secret's SHA-256 (the verifier) in companions.db in its state directory.
// Every connection starts with a hello carrying the id, the secret, the
// companion's protocol version and capabilities; the runtime refuses
// unknown or revoked ids, and answers an older protocol with
// computer_companion_upgrade_required naming the version it needs.
// Unpairing on either side deletes the verifier, so the old credential is
// refused from then on, and closes a live connection.
//
// Output transfer (capability system_command_output_v1): the companion
// runs a command into its own capture store (internal/capture, the same
// implementation as native commands), returns the receipt, and serves
// capture.open/read/close. The runtime verifies every chunk (capture id,
// stream, offset, byte count, SHA-256) and the whole stream's SHA-256
// before it turns bytes into text, so a corrupted, dropped or reordered
// chunk fails the transfer instead of reaching the caller, who gets one
// result. Open transfers pin their captures against expiry until closed or
// disconnected. A failed transfer keeps the receipt; the command is never
// run again (a retry with the same idempotency key reuses the capture).
//
// Desktops: each desktop the companion reaches becomes a desktop on the
// runtime (internal/desktop's Attach), with an id of its own and the queue
// of the physical desktop it reaches. Screen captures come back as private
// 64 KiB chunks of raw pixels, each hashed, and are erased on the
// companion after the transfer, when a newer capture replaces them, on
// close, after an idle timeout, or when the connection drops.
//
// The operations' names and their request and response types are in
// internal/companionapi, which transports import instead of this package.
package companion
