package sandbox

import "github.com/hostlink/hostlink/internal/sandboxapi"

// Mechanisms: how the confinement is enforced.
const (
	MechNamespaces = "namespaces+landlock" // Linux, user namespaces available
	MechLandlock   = "landlock"            // Linux, Landlock alone
	MechSeatbelt   = "seatbelt"            // macOS sandbox-exec
	MechLowIL      = "low-integrity"       // Windows low integrity level
	MechNone       = "none"
)

// Failed is the Status.Mode of a sandbox that is configured but cannot
// be set up here (sandboxapi.Failed).
const Failed = sandboxapi.Failed

// Status is the confinement commands get here, as measured by [Probe]:
// never a claimed one. It is declared in sandboxapi, so that the daemon's
// status types need not link the sandbox.
type Status = sandboxapi.Status

// Effective is the status a command gets under the configured mode: off
// only when the user configured it so, else as Probe measured it (failed
// when no mechanism works here).
func Effective(configured Mode) Status {
	if configured == Off {
		return Status{Mode: Off, Mechanism: MechNone, Reason: `[commands] sandbox = "off"`}
	}
	return Probe()
}

// Unenforced rules, as Status names them (declared in sandboxapi, which
// the launcher shares).
const (
	RuleHiddenListing = sandboxapi.RuleHiddenListing
	RuleHiddenReads   = sandboxapi.RuleHiddenReads
	RuleWrites        = sandboxapi.RuleWrites
	RuleNetwork       = sandboxapi.RuleNetwork
	RuleUDP           = sandboxapi.RuleUDP
	RuleSignals       = sandboxapi.RuleSignals
	RuleAbstractUnix  = sandboxapi.RuleAbstractUnix
	RuleUnixSockets   = sandboxapi.RuleUnixSockets
	RulePrivateTmp    = sandboxapi.RulePrivateTmp
	RuleWorkdirTop    = sandboxapi.RuleWorkdirTop
)
