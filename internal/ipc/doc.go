// Package ipc is hostlink's local control channel: a per-user endpoint that
// the CLI (`hostlink status`, `hostlink call`) and other local tools use to
// talk to the running daemon.
//
// The endpoint is a Unix socket in the runtime directory on Linux and macOS
// and a named pipe carrying the user's SID on Windows. Neither is trusted
// for who is on the other end: every accepted connection's peer is
// measured (SO_PEERCRED, LOCAL_PEERCRED, or the pipe client's token) and
// must be the user hostlink runs as; a peer that cannot be measured is
// refused. Refusals are written to the audit log.
//
// The protocol is JSON lines. A request is exactly
//
//	{"protocol_version":1,"request_id":"r1","method":"read_file","params":{...}}
//
// and its response echoes request_id with either "result" or "error"
// (an errcode.Error). Frames are at most MaxFrame bytes each way. Methods
// are the operation registry's operations, called through ops.Registry.Call
// as transport ipc, so that validation, policy and audit happen there:
// this channel alone is offered the local user's controls (status,
// approvals, reload; ops.LocalUser).
//
// Listen, Dial and Address are the exported API; listen_unix.go and
// pipe_windows.go implement them per OS.
package ipc
