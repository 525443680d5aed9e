// Package fakemodel is a pair of scripted model servers for testing the
// agent runtime adapters against the real CLIs offline: an OpenAI
// Responses API server (for Codex) and an Anthropic Messages API server
// (for Claude Code). Both stream server-sent events as the real APIs do;
// a test's Script reads the conversation the CLI sent (user text, tool
// calls and their results, flattened the same way for both APIs) and
// says what the model answers: text, streamed slowly or not, and tool
// calls. Nothing here is used outside tests.
package fakemodel
