// Package commandapi holds the command operations' names and their
// request and response types, types only: what internal/commands
// implements, and what a transport or the CLI needs to run a command and
// read its receipt without importing the implementation. It is a leaf
// (see TestTypesPackagesAreLeaves); how an operation is described to the
// policy is registered with it, in internal/commands.
package commandapi

// The command operations' names, the same on every transport.
const (
	OpRunCommand        = "run_command"
	OpStartCommand      = "start_command"
	OpCommandStatus     = "command_status"
	OpSendCommandInput  = "send_command_input"
	OpKillCommand       = "kill_command"
	OpListCommands      = "list_commands"
	OpReadCommandOutput = "read_command_output"
)
