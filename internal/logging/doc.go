// Package logging sets up hostlink's own log (the audit log is separate,
// in package audit) with log/slog:
//
//   - Run as a systemd unit (JOURNAL_STREAM names stderr), it writes plain
//     lines to stderr with a syslog priority prefix (<3> error … <7> debug)
//     and no timestamp, which journald turns into levelled journal entries:
//     journalctl --user -u hostlink.
//   - Elsewhere it writes JSON lines to hostlink.log in the per-OS log
//     directory (~/Library/Logs/hostlink on macOS, $XDG_STATE_HOME/hostlink/logs
//     on Linux, %LOCALAPPDATA%\hostlink\logs on Windows), rotated by size
//     with a few old files kept; when stderr is a terminal it also prints
//     readable lines there.
//
// The level comes from config ([log] level). Attributes whose names say
// they hold a secret (token, secret, password, passphrase, authorization,
// cookie) and values that look like bearer credentials are replaced before
// any handler sees them, so a careless log call cannot leak a token.
package logging
