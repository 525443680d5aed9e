// Package daemon assembles a running hostlink from its parts: directories,
// configuration, workdirs, the audit log and the operation registry, and
// serves it over MCP (stdio, or Streamable HTTP on loopback).
package daemon
