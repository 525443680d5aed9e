// Package launcher confines commands on Linux. It runs in a copy of
// hostlink started in new user and mount namespaces, in one of two ways:
//
//   - As the fork server (ServeEnv), when user namespaces work: one
//     process for as long as hostlink runs, started with the first
//     sandboxed command. For each command it confines a thread of its own
//     (a mount namespace, and a network namespace unless the command may
//     use the network; the command's view of the filesystem made with
//     mounts; Landlock; no_new_privs; no capabilities) and forks the
//     command from that thread as hostlink's child, so that no Go program
//     starts per command (see server_linux.go).
//   - As the launcher (Env), when Landlock alone works (no user
//     namespaces): a copy of hostlink per command, whose init finds the
//     Spec before main runs, confines the whole process as above and execs
//     the command. A failure before the exec is written to the report pipe
//     as a Report (package sandbox reads it and types the error); a
//     successful exec closes the pipe.
//
// It is a package of its own, with as few imports as it can do with,
// because Go runs package initializers in an order it derives from import
// paths: this package's init runs once every package it imports is
// initialized, and each package it imports that Go puts late in that
// order held it back behind more of hostlink's initializers. Without
// path/filepath, net, regexp and os/exec it gets to work after 79 of
// hostlink's 137 initializers instead of after all of them; the design
// notes (docs/DESIGN.md, the Linux launcher and its cost) give the
// measured start times.
package launcher
