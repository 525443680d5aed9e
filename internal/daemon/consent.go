package daemon

import (
	"context"
	"runtime"
)

// ExitConsent is the exit status of `hostlink serve` when the configuration
// asks for computer use and macOS has not granted Accessibility or Screen
// Recording yet (78, EX_CONFIG). The LaunchAgent's KeepAlive
// {SuccessfulExit = false} makes launchd start hostlink again, so granting
// the permission in System Settings recovers without touching launchctl.
const ExitConsent = 78

// ConsentError is CheckConsent's refusal; ExitCode gives the exit status.
type ConsentError struct{ Reason string }

func (e *ConsentError) Error() string {
	return "computer use is enabled but macOS has not granted hostlink Accessibility and Screen Recording (" + e.Reason +
		"): allow it in System Settings > Privacy & Security; hostlink exits with status 78 until then"
}

// ExitCode is the process exit status for this error.
func (e *ConsentError) ExitCode() int { return ExitConsent }

// CheckConsent refuses to start when computer use is enabled and an OS
// permission is missing on macOS. Elsewhere a desktop that is not ready is
// only reported (status, doctor), and hostlink runs without computer use.
func (d *Daemon) CheckConsent(ctx context.Context) error {
	if d.Computer == nil || runtime.GOOS != "darwin" {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, readyTimeout)
	defer cancel()
	ok, why := d.Computer.Ready(ctx)
	return consentDecision(true, "darwin", ok, why)
}

// consentDecision is CheckConsent's rule: only a missing macOS permission
// for an enabled computer use stops the daemon.
func consentDecision(enabled bool, goos string, ready bool, reason string) error {
	if enabled && goos == "darwin" && !ready && reason == "permission_pending" {
		return &ConsentError{Reason: reason}
	}
	return nil
}
