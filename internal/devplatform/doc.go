// Package devplatform is a reference platform for the Local PC Executor
// protocol v1.1: it serves the control endpoint (/ws/local-executor) and
// the session data endpoints (/ws/local-executor/{session_id}) on loopback,
// authenticates executors by bearer token, plays the platform's side of
// the handshake, and lets a caller send any message to a connected
// executor and read its replies, in Go (Server) or over a small local HTTP
// API (/api/...).
//
// It is what hostlink's link tests drive and how a user tries the link
// without a cloud account. It is a reference endpoint, not a production
// platform: no accounts, no persistence, one token, loopback only.
package devplatform
