package agent

import (
	"fmt"

	"github.com/hostlink/hostlink/internal/agentapi"
)

// Judge settles Ready and Reason of rd, the readiness of a runtime its
// Probe found installed. One known to be logged out is not ready, and the
// reason says how to log in (login); any other is ready, with a reason
// when Version is not tested, the version its adapter was tested with.
// program names the CLI in that reason.
func Judge(rd agentapi.Readiness, program, tested string, loggedOut bool, login string) agentapi.Readiness {
	switch {
	case loggedOut:
		rd.Ready = false
		rd.Reason = "not logged in (" + login + ")"
	case rd.Version != tested:
		rd.Ready = true
		rd.Reason = fmt.Sprintf("%s %s is not the tested version %s", program, rd.Version, tested)
	default:
		rd.Ready = true
	}
	return rd
}

// known reports whether rd is a verdict: not still being checked.
func known(rd agentapi.Readiness) bool { return !rd.Checking }
