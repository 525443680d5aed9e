// Package streamjson speaks the stream-json control protocol of Claude
// Code (`claude -p --input-format stream-json --output-format stream-json
// --permission-prompt-tool stdio`) and of Qoder CLI, which speaks the same
// protocol with small differences (see Dialect).
//
// One CLI process drives one session: hostlink writes user messages and
// control requests (initialize, interrupt) on its stdin and answers the
// CLI's control requests (can_use_tool: an approval, or for the
// AskUserQuestion tool a question); the CLI writes system, assistant,
// user (tool results), stream_event, control_request,
// control_cancel_request, control_response and result messages. A turn
// ends at the result for its last user message; is_error is checked on
// every result, since a CLI that is not logged in reports success with
// is_error set.
//
// CLI is how an adapter runs one such CLI (its flags, environment and
// model list), so that the Claude Code and Qoder adapters start, resume
// and list models the same way.
package streamjson
