// Package agent runs agent tasks: it hands a prompt to a local agent
// runtime (Codex, Claude Code, Qoder; a deterministic fake in tests)
// working in a workdir, records everything the runtime reports, passes its
// approvals and questions to clients as offered, and never loses a task or
// lets two writers into one workdir, across crashes too.
//
// The pieces:
//
//   - A state machine (queued, starting, running, waiting_approval,
//     waiting_input, then completed, failed, cancelled or interrupted)
//     with an explicit transition table; the store checks every change
//     against it inside the transaction that makes the change.
//   - A SQLite store (WAL, versioned migrations, a private file) holding
//     tasks, their events and their pending requests. A task's state and
//     the events describing the change commit in one transaction. Events
//     carry a schema version, a per-task sequence number and correlation
//     ids (task, session, turn, item, request); host paths outside the
//     task's workdir are redacted before they are stored.
//   - An immutable execution manifest per task (canonical JSON, its
//     SHA-256 and the fingerprint of the policy in force), stored before
//     the runtime starts; a trigger refuses any later change.
//   - Idempotency: a key reused with the same request returns the first
//     task, with a different one IDEMPOTENCY_CONFLICT.
//   - The writer lease (package lease): a workspace-write task holds its
//     workdir's lease for each turn, with a persistent guard beside it.
//   - Recovery: at start-up every task a dead hostlink process left
//     unfinished is reconciled through its runtime (completed if the
//     runtime proves the turn finished, otherwise interrupted with the
//     reason), and guards left by dead writers are kept, marked, until the
//     user runs `hostlink agent recover ALIAS`.
//   - Runtime adapters (Runtime, Session, Sink) speak each runtime's line
//     protocol over a child process started through internal/procs. They
//     are created at first use, so a missing or broken runtime never stops
//     the others.
//
// Several hostlink processes may share the state directory (hostlink serve
// and hostlink mcp side by side). Each engine holds a lock on its own owner
// file for its life; a task belongs to the engine that started it, and
// start-up recovery touches only tasks whose owner's lock is free, that
// is, whose process is gone.
//
// The operations' names and their request and response types, and the
// plain data the adapters report (Readiness, Model, Question) and the
// event envelope, are in internal/agentapi, which transports import
// instead of this package.
package agent
