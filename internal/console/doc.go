// Package console is hostlink's local web console, served by the daemon
// beside MCP on the loopback listener at /console/.
//
// It shows what only the person at the computer should see and decide:
// pending approvals with approve and deny, live activity, the audit log
// with filters and chain verification, commands and their captured
// output, agent tasks with their events, desktop observations with the
// acts taken on them, connection and capability status, workdirs and the
// folders platform sessions selected, and the policy in force (read-only:
// it is changed in config.toml).
//
// Pages are rendered on the server (html/template) with embedded CSS and
// one small script that refreshes parts of a page; nothing is loaded from
// the network. Every request passes the MCP endpoint's local checks
// (loopback peer and Host, no foreign Origin) and the console's own: a
// request from another origin is refused, a POST must prove its origin
// (Origin, else Referer) and carry the session's form token, and every
// response forbids framing (CSP frame-ancestors 'none', X-Frame-Options
// DENY). A browser logs in only through a one-time login link that the
// daemon hands to the local user on its control channel (`hostlink
// console`; Server.NewLogin), never with the MCP bearer token or any
// credential an agent, the platform or a companion holds, and then holds
// a session cookie that is HttpOnly and SameSite=Strict.
package console
