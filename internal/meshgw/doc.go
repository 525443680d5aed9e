// Package meshgw is the mesh's gateway: one MCP server (Streamable HTTP
// with a bearer token, and stdio) for a whole fleet of hostlink
// executors. Each operation an executor may serve on the mesh is one
// tool, listed once with a required machine argument, so that the tool
// list stays flat however many machines there are; list_machines shows
// the fleet from service discovery, and fanout runs a read-only
// operation on every machine a label selector picks, with a result or an
// error per machine.
//
// The gateway only relays. It is a caller on the bus like any other, its
// requests signed with its key; whether a call runs, and under which
// policy, approvals, sandbox and audit, is decided by the machine it is
// for. It cannot decide an approval: no executor serves that.
package meshgw
