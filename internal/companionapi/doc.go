// Package companionapi holds the companion operations' names and their
// request and response types, types only: what internal/companion
// implements, and what a transport or the CLI needs to run a command on
// the companion's host or read the companions' status without importing
// the runtime. A companion command's receipt is declared here too, and
// the companion protocol's command.run carries it by this name. It is a
// leaf (see TestTypesPackagesAreLeaves); how an operation is described
// to the policy is registered with it, in internal/companion.
package companionapi

// The companion operations' names, the same on every transport.
const (
	OpRunCommand = "companion_run_command"
	OpStatus     = "companion_status"
)
