// Package launcher is the sandbox's launcher on Linux: the process a
// confined command starts as. hostlink re-executes itself with a Spec in
// the environment (Env), in new user and mount namespaces (and a new
// network namespace unless the command may use the network); this
// package's init finds the Spec before main runs, gives the process the
// command's view of the filesystem with mounts, applies Landlock, sets
// no_new_privs, drops every capability and execs the command. A failure
// before the exec is written to the report pipe as a Report (package
// sandbox reads it and types the error); a successful exec closes the
// pipe.
//
// It is a package of its own, with as few imports as it can do with,
// because Go runs package initializers in an order it derives from import
// paths: the launcher's init runs once every package it imports is
// initialized, and each package it imports that Go puts late in that
// order held it back behind more of hostlink's initializers. Without
// path/filepath, net, regexp and os/exec the launcher gets to work after
// 79 of hostlink's 137 initializers instead of after all of them; the
// design notes (docs/DESIGN.md, the Linux launcher and its cost) give the
// measured start times.
package launcher
