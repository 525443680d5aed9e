// Package fakeruntime is a deterministic agent runtime for tests: a real
// child process speaking a line protocol over stdio, as Codex, Claude Code
// and Qoder do, and the adapter that drives it.
//
// The program ([Main]) takes each turn's input as a script, one directive a
// line, so a test states exactly what the runtime does:
//
//	say TEXT         an agent message, streamed as three deltas
//	items N          N small items
//	approve TEXT     ask for approval of command TEXT, offering accept,
//	                 acceptForSession, decline, cancel and an object-shaped
//	                 variant; the decision is echoed as an item
//	ask TEXT         ask a question (options yes/no, other text allowed)
//	sleep MS         a long step: an interrupt ends the turn, a steer ends
//	                 the step early and is echoed as an item
//	write PATH TEXT  write TEXT to PATH under the session's directory (a
//	                 read-only session fails the turn instead, as a sandbox)
//	path             report an item naming a host path outside the workdir
//	crash            exit at once (status 3), mid-turn
//	fail TEXT        end the turn as failed
//	result TEXT      the turn's final answer (default "done")
//	bigresult N      a final answer of N bytes of multi-byte text
//
// Any other line is a say. Sessions are files in the state directory the
// adapter passes, so a new process can resume one: a turn that was running
// when its process died is reported interrupted, a finished one with its
// result.
//
// It exists for tests, which wire it in themselves (daemon.Options.Runtimes,
// or a test build of hostlink, tag hostlinktest, when
// HOSTLINK_TEST_FAKE_RUNTIME names the fakeagent command in this
// directory); a release build of hostlink has no adapter for it.
package fakeruntime
