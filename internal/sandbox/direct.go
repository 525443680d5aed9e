//go:build darwin || windows

package sandbox

// On macOS and Windows the command is confined from its start
// (sandbox-exec applies the profile before it execs the command, and
// CreateProcessAsUser the token): nothing reports back, and there is
// nothing to wait for or to undo but what Cleanup releases.

func (l *Launch) started() error { return nil }

func (l *Launch) abort() {}
