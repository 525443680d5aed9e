// Package autostart writes and removes the per-OS unit that starts
// `hostlink serve` when the user logs in:
//
//   - macOS: a launchd LaunchAgent plist in ~/Library/LaunchAgents with
//     RunAtLoad and KeepAlive {SuccessfulExit = false}, so launchd restarts
//     hostlink after a failure, including the consent exit (78) when
//     computer use waits for Accessibility or Screen Recording.
//   - Linux: a systemd user unit in $XDG_CONFIG_HOME/systemd/user, with the
//     `loginctl enable-linger` hint for headless machines.
//   - Windows: a Task Scheduler task (XML, logon trigger) in the state
//     directory, registered with `schtasks /Create /XML`.
//
// Install and Uninstall only write or remove files; they return the exact
// commands that register or unregister the unit with the OS service
// manager, for the user to run. Both are idempotent. The unit builders are
// plain functions, so every OS's unit is generated and checked on any OS.
package autostart
