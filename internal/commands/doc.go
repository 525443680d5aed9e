// Package commands implements hostlink's command operations: run_command,
// start_command, command_status, send_command_input, kill_command,
// list_commands and read_command_output.
//
// Command execution is off until the local user turns it on (config
// commands.enabled or `hostlink serve --enable-shell`); when off, the
// operations are not registered at all, so no transport can offer them.
// A command runs through internal/procs (its own process group or Job
// Object, a scrubbed environment, whole-tree termination) with its output
// streamed into internal/capture (private files, bounded memory, verified
// chunked reads). The working directory is jailed like any file path.
// The operations' names and their request and response types are in
// internal/commandapi, which transports import instead of this package.
package commands
