// Package completion writes shell completion scripts for bash, zsh, fish and
// PowerShell from the kong model of hostlink's command line, so the completions shipped
// in the archives and packages cannot drift from the commands and flags the
// binary accepts.
//
// Each script holds the same table, one entry per command path: its
// subcommands, its flags (with those of its parents, which kong accepts
// there too) and which of them take a value. A small walker in the shell's
// own language finds the command path of the words typed so far, skipping
// flags and their values, and completes subcommands, flags, enum values and
// file names from the table. Nothing runs hostlink at completion time.
package completion
