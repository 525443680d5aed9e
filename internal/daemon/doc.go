// Package daemon assembles a running hostlink from its parts: directories,
// configuration, workdirs, the audit log, the approval policy, the
// services (commands, desktop, agents, companions) and the operation
// registries, and serves them: MCP on stdio or Streamable HTTP on
// loopback, the local control channel, the web console and the platform
// link.
//
// Every registry the daemon serves is built by assemble (assemble.go), for
// the configured workdirs and for each platform session alike, with the
// same guards, limits and registrations.
package daemon
