// Package claude is the agent runtime adapter for Claude Code, spoken
// through `claude -p` with stream-json input and output and
// `--permission-prompt-tool stdio` (see internal/agent/streamjson). Each
// task runs its own claude process, with a session id hostlink chooses
// (--session-id) and resumes after a restart (--resume). Tool permissions
// (Bash, Write, Edit, ...) are relayed as approvals and the
// AskUserQuestion tool as questions; the models the initialize request
// lists are the runtime's model discovery.
package claude
