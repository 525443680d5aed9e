package agent

import "fmt"

// Judge settles Ready and Reason for a runtime its Probe found installed.
// One known to be logged out is not ready, and the reason says how to log
// in (login); any other is ready, with a reason when Version is not
// tested, the version its adapter was tested with. program names the CLI
// in that reason.
func (rd Readiness) Judge(program, tested string, loggedOut bool, login string) Readiness {
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
