// Package approvals holds the actions that the local policy sends to the
// user for a decision, until the user decides or they expire.
//
// An approval is bound to one exact action: its SHA-256 over the canonical
// JSON of the operation, the transport, the resolved workdir and every
// request argument. A request that differs in anything, even a byte of a
// file's content, is another action and needs its own approval.
//
// # How a caller waits
//
// Require holds the calling operation for at most the broker's wait (a few
// seconds, bounded so that no transport's request times out). A decision
// within that wait lets the operation run, or refuses it, at once. If the
// user has not decided by then, the caller gets APPROVAL_PENDING carrying
// the approval's id and deadline, and the operation has not run. Sending
// the identical request again (after the user approves, or meanwhile)
// finds the same approval by its hash: it runs once when approved, or
// gets APPROVAL_DENIED or APPROVAL_EXPIRED once the user denied it or its
// deadline passed. A granted approval is used up by the one call it
// covers, and must be used before its deadline too.
//
// Decisions are taken only through Decide, DecideWith and DecideBatch,
// which the daemon offers on the local user's channels (the control
// channel and the web console), never as a registry operation, so no
// remote transport can approve anything; the one exception is the opt-in
// [policy] approve_in_client, where an MCP client's own prompt answers.
// Every request, decision and expiry is written to the audit log.
//
// # Grants
//
// Approving with a scope other than once makes a Grant (see Scope): later
// actions it covers run without asking until it ends (its window, its
// session, the daemon) or is revoked. The policy consults grants only
// where its mode asks, so a grant never widens deny. Grants are held in
// memory only; saving one writes the configuration rule that lasts.
package approvals
