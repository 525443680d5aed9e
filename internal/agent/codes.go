package agent

import (
	"errors"

	"github.com/hostlink/hostlink/internal/agent/agentcli"
	"github.com/hostlink/hostlink/internal/errcode"
)

// Codes this package adds to internal/errcode's (and internal/lease's
// WORKDIR_BUSY and WORKDIR_RECOVERY_REQUIRED, which agent operations also
// return).
const (
	// CodeTaskNotFound: no task has that id.
	CodeTaskNotFound errcode.Code = "TASK_NOT_FOUND"
	// CodeInvalidState: the task's state does not allow the request (a
	// steer to a finished task, an approval to a task not waiting).
	CodeInvalidState errcode.Code = "INVALID_STATE"
	// CodeIdempotencyConflict: the idempotency key was used for a
	// different request.
	CodeIdempotencyConflict errcode.Code = "IDEMPOTENCY_CONFLICT"
	// CodeRuntimeUnavailable: the runtime is not allowed, or failed to
	// answer.
	CodeRuntimeUnavailable errcode.Code = "RUNTIME_UNAVAILABLE"
	// CodeRuntimeNotReady: a runtime that is not installed or is known
	// not ready (its readiness check says why, in the error's readiness
	// detail), whichever operation finds it so: submit_agent_task (where
	// queue_if_not_ready submits anyway), list_agent_models, or a task's
	// start.
	CodeRuntimeNotReady errcode.Code = "RUNTIME_NOT_READY"
	// CodeRuntimeTimeout: the runtime did not answer within a configured
	// limit; the message and the "limit" detail name its config key.
	CodeRuntimeTimeout errcode.Code = "RUNTIME_TIMEOUT"
	// CodeAgentNotAllowed: the workdir's agent_mode does not allow the
	// request (agents disabled there, or write access to a read-only one).
	CodeAgentNotAllowed errcode.Code = "AGENT_NOT_ALLOWED"
	// CodeRequestNotFound: no pending approval or question has that id.
	CodeRequestNotFound errcode.Code = "REQUEST_NOT_FOUND"
	// CodeRequestExpired: the approval or question expired before the answer.
	CodeRequestExpired errcode.Code = "REQUEST_EXPIRED"
	// CodeRequestResolved: the approval or question was already answered
	// (or withdrawn by the runtime).
	CodeRequestResolved errcode.Code = "REQUEST_ALREADY_RESOLVED"
	// CodeDecisionNotOffered: the decision is not one the runtime offered.
	CodeDecisionNotOffered errcode.Code = "DECISION_NOT_OFFERED"
	// CodeTaskElsewhere: another running hostlink process drives the task;
	// only that process can talk to its runtime.
	CodeTaskElsewhere errcode.Code = "TASK_OWNED_BY_OTHER_PROCESS"
	// CodeResultUnavailable: the task has no result (yet).
	CodeResultUnavailable errcode.Code = "RESULT_UNAVAILABLE"
	// CodeTooManyTasks: max_concurrent_tasks tasks are active.
	CodeTooManyTasks errcode.Code = "TOO_MANY_TASKS"
)

// StartCode is the code of a failure to find a runtime's CLI:
// RUNTIME_NOT_READY when it is not installed, the condition's one code
// everywhere, else RUNTIME_UNAVAILABLE.
func StartCode(err error) errcode.Code {
	if errors.Is(err, agentcli.ErrNotInstalled) {
		return CodeRuntimeNotReady
	}
	return CodeRuntimeUnavailable
}
