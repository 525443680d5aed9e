//go:build !linux && !windows

package desktop

// exePath is a process's program; macOS offers it only through libproc,
// which hostlink does not bind yet.
func exePath(pid int) string { return "" }
