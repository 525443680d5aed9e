// Package fds keeps descriptors that hostlink inherited from whoever
// started it out of the commands it runs.
//
// A launcher (a shell, an IDE, an agent, a service manager) may leave
// descriptors open without close-on-exec: a log file, a socket, a pipe to
// itself. Go's own descriptors are all close-on-exec, but inherited ones
// are not, so without care every command hostlink runs would inherit them
// too and could read or write them. CloseOnExec, called first thing in
// main, marks every descriptor above standard error close-on-exec.
//
// On Windows a child gets only the handles its creator lists (os/exec
// passes an explicit handle list), so there is nothing to do there.
package fds

// CloseOnExec marks every open descriptor above 2 close-on-exec.
func CloseOnExec() error { return closeOnExec() }
