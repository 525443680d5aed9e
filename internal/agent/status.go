package agent

import (
	"fmt"

	"github.com/hostlink/hostlink/internal/errcode"
)

// Status is a task's state.
type Status string

// The task states. completed, failed, cancelled and interrupted are
// terminal: nothing leaves them.
const (
	Queued          Status = "queued"
	Starting        Status = "starting"
	Running         Status = "running"
	WaitingApproval Status = "waiting_approval"
	WaitingInput    Status = "waiting_input"
	Completed       Status = "completed"
	Failed          Status = "failed"
	Cancelled       Status = "cancelled"
	Interrupted     Status = "interrupted"
)

// Statuses lists every state, in life-cycle order.
var Statuses = []Status{Queued, Starting, Running, WaitingApproval, WaitingInput, Completed, Failed, Cancelled, Interrupted}

// transitions is the whole state machine: a move not listed is refused.
// interrupted is reached only through start-up recovery (hostlink, not the
// runtime, stopped: the turn may or may not have finished) or a turn the
// runtime ended as interrupted by itself.
var transitions = map[Status][]Status{
	Queued:          {Starting, Cancelled, Failed, Interrupted},
	Starting:        {Running, Failed, Cancelled, Interrupted},
	Running:         {WaitingApproval, WaitingInput, Completed, Failed, Cancelled, Interrupted},
	WaitingApproval: {Running, Failed, Cancelled, Interrupted},
	WaitingInput:    {Running, Failed, Cancelled, Interrupted},
}

// Terminal reports whether s is a final state.
func (s Status) Terminal() bool {
	switch s {
	case Completed, Failed, Cancelled, Interrupted:
		return true
	}
	return false
}

// Active reports whether a task in s has a turn the engine is driving.
func (s Status) Active() bool { return !s.Terminal() }

// CanTransition reports whether the state machine allows from → to.
func CanTransition(from, to Status) bool {
	for _, s := range transitions[from] {
		if s == to {
			return true
		}
	}
	return false
}

// checkTransition returns an INVALID_STATE error for a move the table does
// not allow.
func checkTransition(from, to Status) error {
	if CanTransition(from, to) {
		return nil
	}
	return errcode.New(CodeInvalidState, "a task that is %s cannot become %s", from, to).
		With("status", string(from))
}

func (s Status) String() string { return string(s) }

func parseStatus(v string) (Status, error) {
	for _, s := range Statuses {
		if string(s) == v {
			return s, nil
		}
	}
	return "", fmt.Errorf("unknown task status %q", v)
}
