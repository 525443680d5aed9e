// Package agentcli is what the agent runtime adapters (Codex, Claude Code,
// Qoder) share about talking to a CLI: finding its executable (a configured
// path, PATH, or the platform binary inside the npm package layout),
// starting it through internal/procs (own process group or Job Object,
// scrubbed environment plus only the variables the runtime needs), and
// reading its newline-delimited JSON of any line length.
package agentcli
