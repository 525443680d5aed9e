// Package mcpfront is `hostlink mcp`: a stdio front end of the one daemon,
// as tailscale's CLI is of tailscaled. It opens an MCP session on the
// daemon's control channel (ipc.MethodMCPSession, peer-checked like every
// control-channel connection) and copies the client's stdin to it and the
// daemon's answers to stdout, so that every stdio client shares the
// daemon's approvals, audit chain, leases and console, and progress
// notifications and cancellations cross unchanged. The MCP server, with
// its stdio line handling, runs in the daemon (package mcpserve).
//
// When no daemon runs, Run starts one in the background with the same
// configuration (`hostlink serve --idle-exit`) and says so on stderr with
// the console's address; the started daemon stops after it has been idle
// for its idle period (daemon.DefaultIdleExit). While it starts, the front
// end answers the client's initialize and tools/list from the Catalogue
// the last daemon it started gave, then checks them against the daemon
// (handshake.go): that is the only MCP the front end speaks.
package mcpfront
