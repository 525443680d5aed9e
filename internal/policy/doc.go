// Package policy is hostlink's local approval policy: for each class of
// action (files_read, files_write, commands, computer, computer_observe,
// agents), by default and per workdir, deny, ask or allow, with optional
// allow rules for exact command lines and path globs.
//
// The package is generic: it knows classes, modes and actions, never an
// operation's name or arguments. Each operation declares its class (its
// ops.Spec) and describes its own request: the request type implements
// Describer, saying which workdir paths it touches, with which classes,
// and what an approval shows. The operation registry asks Engine.Decide
// once per call, for every transport (MCP, the control channel, the
// platform link), after the request is decoded and before it runs. Under
// ask the described action is held for the user's decision through
// package approvals.
//
// The policy lives in the local configuration only. No operation reads or
// changes it: it is changed by editing the configuration and reloading.
package policy
