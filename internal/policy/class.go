package policy

import "slices"

// Class is a kind of action the policy sets a mode for: a key of the
// configuration's [policy] table, or one of the fixed classes below.
type Class string

// The configurable classes.
const (
	FilesRead  Class = "files_read"  // reading, listing, searching files
	FilesWrite Class = "files_write" // writing, editing, moving, deleting, creating
	Commands   Class = "commands"    // starting commands and feeding them input
	// CommandsUnsandboxed is a command that asks for less than the
	// sandbox (the network, or none); its mode is the stricter of its own
	// and that of commands.
	CommandsUnsandboxed Class = "commands_unsandboxed"
	Computer            Class = "computer"         // input to the desktop, applications, the clipboard
	ComputerObserve     Class = "computer_observe" // screenshots, windows, what the desktop shows
	Agents              Class = "agents"           // submitting, steering and answering agent tasks
)

// The fixed classes, which no [policy] table sets.
const (
	// PlatformFolders is the browsing and choosing of a folder for a
	// platform session; its mode is [policy] platform_folders.
	PlatformFolders Class = "platform_folders"
	// Hostlink is hostlink's own state and the local user's own controls
	// (status, approval decisions, reload): always allowed. Which
	// transports may call such an operation is its spec's business.
	Hostlink Class = "hostlink"
)

// Classes lists the configurable classes, in the order they are shown;
// the configuration accepts exactly these keys.
var Classes = []Class{FilesRead, FilesWrite, Commands, CommandsUnsandboxed, Computer, ComputerObserve, Agents}

// Known reports whether c is a class: configurable or fixed.
func Known(c Class) bool {
	return slices.Contains(Classes, c) || c == PlatformFolders || c == Hostlink
}

// Mode is what the policy does with an action.
type Mode string

// Modes.
const (
	Deny  Mode = "deny"
	Ask   Mode = "ask"
	Allow Mode = "allow"
)

// Modes lists the valid modes, for configuration checks.
var Modes = []Mode{Deny, Ask, Allow}

// stricter returns the stricter of two modes.
func stricter(a, b Mode) Mode {
	rank := func(m Mode) int {
		switch m {
		case Allow:
			return 0
		case Deny:
			return 2
		}
		return 1
	}
	if rank(b) > rank(a) {
		return b
	}
	return a
}
