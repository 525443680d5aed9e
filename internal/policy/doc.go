// Package policy is hostlink's local approval policy: for each class of
// action (files_read, files_write, commands, computer, computer_observe,
// agents), by default and per workdir, deny, ask or allow, with optional
// allow rules for exact command lines and path globs.
//
// The policy lives in the local configuration only and is enforced once,
// in the operation registry (ops.Policy), for every transport: MCP, the
// control channel and the platform link. Under ask, the action is
// described exactly (the command line with its directory and environment
// names, the file and operation, the input with its target window and
// coordinates, the agent task with its prompt and access mode) and held
// for the user's decision through package approvals. No operation reads
// or changes the policy: it is changed by editing the configuration and
// reloading.
package policy
