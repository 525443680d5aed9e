// Package doctor checks a hostlink installation and explains what it
// finds: each check is one line, OK, WARN or FAIL, and every WARN or FAIL
// carries the fix. It covers the configuration, the workdirs (existing,
// writable, case sensitivity), the state, log and audit directories and
// their permissions, the credential backend and the pairing, the platform
// link (reachable, token accepted), the control channel of a running
// daemon, each capability's readiness (computer use: display server,
// macOS permissions, and in a Wayland session the portal with its
// interface versions, GStreamer with pipewiresrc and pw-dump; agent
// runtimes as the running daemon reports them, or their CLIs on PATH) and
// the autostart unit.
//
// A FAIL means hostlink cannot do what its configuration asks; a WARN is
// something to know (not paired, no autostart, a capability not ready).
// `hostlink doctor` exits non-zero when any check fails; --json prints the
// Report for scripts.
package doctor
