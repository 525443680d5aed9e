// Package wayland is hostlink's desktop backend for Wayland sessions,
// through the xdg-desktop-portal RemoteDesktop and ScreenCast portals (so
// it works wherever the compositor's portal backend implements them:
// GNOME, KDE, others) over D-Bus, with GStreamer's gst-launch-1.0 and
// pipewiresrc as an external program for frames, so hostlink stays
// cgo-free.
//
// What the portals impose, and how the backend meets it:
//
//   - Consent. The portal shows the person at the screen a dialog in which
//     they choose a monitor and allow (or not) remote interaction. hostlink
//     never answers it itself. The first observation of a daemon's life
//     opens it; while it is open every request reports permission_pending;
//     a refusal is final until hostlink restarts. Where the portal offers a
//     restore token (RemoteDesktop version 2, ScreenCast version 4 for
//     capture-only sessions) the backend keeps it in memory, so a session
//     the compositor closes can be reopened without a second dialog.
//   - One monitor per session, the one the person chose. It is captured by
//     its PipeWire object serial, never by its node id: node ids are
//     reused, and a reused id names another stream.
//   - Fresh frames. A capture is a new pipewiresrc consumer, which gets a
//     newly recorded frame; its buffer timestamp (CLOCK_MONOTONIC) must be
//     later than the start of the capture, else the capture fails with
//     linux_pipewire_fresh_frame_unavailable. Old frames are never resent
//     (no keepalive-time, no resend-last).
//   - Deadlines. Every portal request and every capture has one: a capture
//     of a stream the compositor has ended hangs forever otherwise.
//   - A closed session (a resolution change, a revoked permission, a
//     compositor restart) is reported, never silently reopened within a
//     request: an act on an observation of the closed session is refused as
//     drift; the next observation opens a new session.
//   - Input warm-up: a new virtual input device drops the events that reach
//     the compositor before it has set the device up, so the first input of
//     a session is preceded by a Shift press and release and a pointer
//     motion, and a pause.
//   - Scrolling is in whole notches (multiples of 120 wheel units).
//
// There is no global window inventory, window focus or cursor position on
// Wayland: Windows, Focus and Cursor are not supported, and Status says so.
// Accessibility is AT-SPI, where the session bus has it.
//
// Native coordinates are the compositor's logical pixels: the stream's
// position and size as the portal gives them.
package wayland
