package main

import "errors"

// exitCode is the process status for err: its own when it has one (the
// consent exit 78 of serve), else 1.
func exitCode(err error) int {
	var c interface{ ExitCode() int }
	if errors.As(err, &c) {
		return c.ExitCode()
	}
	return 1
}
