// Package sandboxapi holds the sandbox's status as the daemon reports it:
// types only, importing nothing beyond the standard library, so that the
// control channel's types (apitype) can carry it without linking the
// sandbox itself (and its OS libraries).
package sandboxapi

import (
	"fmt"
	"strings"
)

// Mode is a sandbox mode, as configured by [commands] sandbox.
type Mode string

// Modes.
const (
	// Workdir confines a command to its workdir (see package sandbox).
	Workdir Mode = "workdir"
	// Off runs a command with all of the user's permissions.
	Off Mode = "off"
)

// Failed is the Status.Mode of a sandbox that is configured but cannot be
// set up here: commands that would run in it are refused (SANDBOX_FAILED),
// never run unconfined. It is measured, never configured.
const Failed Mode = "failed"

// Status is the confinement commands get here, as measured by sandbox.Probe:
// never a claimed one.
type Status struct {
	// Mode is what commands actually get: "workdir" when they are
	// confined, "off" when the user configured no sandbox, "failed" when
	// the sandbox cannot be set up and commands are refused.
	Mode Mode `json:"mode"`
	// Mechanism names how: namespaces+landlock, landlock, seatbelt,
	// low-integrity or none.
	Mechanism string `json:"mechanism"`
	// Unenforced lists the rules of workdir mode this machine does not
	// enforce (for example "hidden-listing" or "udp").
	Unenforced []string `json:"unenforced,omitempty"`
	// LandlockABI is the kernel's Landlock ABI version (Linux; 0 without).
	LandlockABI int `json:"landlock_abi,omitempty"`
	// UserNamespaces reports whether unprivileged user namespaces work
	// (Linux).
	UserNamespaces bool `json:"user_namespaces,omitempty"`
	// Reason says why commands are not confined, or not fully.
	Reason string `json:"reason,omitempty"`
}

// String describes the status in one line, for doctor and status: how
// commands run ("workdir via ...", "off (...)"), or that they do not.
func (s Status) String() string {
	if s.Mode == Failed {
		return "FAILED: commands are refused, never run unconfined (" + s.Reason + ")"
	}
	if s.Mode == Off {
		if s.Reason != "" {
			return "off (" + s.Reason + ")"
		}
		return "off"
	}
	out := fmt.Sprintf("%s via %s", s.Mode, s.Mechanism)
	if len(s.Unenforced) > 0 {
		out += "; not enforced: " + strings.Join(s.Unenforced, ", ")
	}
	return out
}

// Unenforced rules, as Status names them.
const (
	RuleHiddenListing = "hidden-listing" // hidden directories can be listed (names only)
	RuleHiddenReads   = "hidden-reads"   // hidden files can be read
	RuleWrites        = "writes"         // writes outside the workdir
	RuleNetwork       = "network"        // TCP and UDP
	RuleUDP           = "udp"            // UDP (Landlock covers TCP only)
	RuleSignals       = "signals"        // signals to processes outside the tree
	RuleAbstractUnix  = "abstract-unix"  // abstract UNIX sockets outside the tree
	RuleUnixSockets   = "unix-sockets"   // pathname UNIX sockets outside the hidden paths (a session bus can start programs outside hostlink's tree; with Landlock alone, hostlink's control socket too)
	RulePrivateTmp    = "private-tmp"    // /tmp is shared (TMPDIR is still private)
	RuleWorkdirTop    = "workdir-top"    // new entries at the top of a workdir that holds hostlink's directories
)
