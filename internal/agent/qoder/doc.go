// Package qoder is the agent runtime adapter for Qoder CLI (qodercli),
// which speaks Claude Code's stream-json control protocol (see
// internal/agent/streamjson) with these differences: no --verbose flag,
// permission replies echo the request's toolUseID, a permission request
// may arrive before the assistant message holding its tool use, and a
// result's text may be empty (the final text is then the last assistant
// message). qodercli ships as a Node.js bundle: found on PATH, or in the
// @qoder-ai/qodercli package, run with node.
package qoder
