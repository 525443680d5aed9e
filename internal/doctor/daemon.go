package doctor

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/hostlink/hostlink/internal/apitype"
	"github.com/hostlink/hostlink/internal/autostart"
	"github.com/hostlink/hostlink/internal/desktop"
	"github.com/hostlink/hostlink/internal/ipc"
	"github.com/hostlink/hostlink/internal/version"
)

// checkControl asks a running daemon for its status over the control
// channel; the capabilities it reports are checked after.
func (e *env) checkControl(ctx context.Context) {
	st, addr, err := e.daemonStatus(ctx)
	if err != nil {
		e.add("control channel", Warn, fmt.Sprintf("no hostlink running at %s (%v)", addr, err), "start it: hostlink serve, or at login: hostlink install")
		return
	}
	e.status = st
	e.add("control channel", OK, fmt.Sprintf("hostlink %s running at %s, pid %d, up %s; link %s", st.Version, addr, st.PID,
		(time.Duration(st.UptimeSeconds)*time.Second).String(), st.Link.State), "")
	if mine := version.Get(); st.Build.Version != "" && (st.Build.Version != mine.Version || st.Build.Commit != mine.Commit) {
		e.add("daemon version", Warn, "the running daemon is "+st.Build.Summary()+"; this hostlink is "+mine.Summary(),
			"restart the daemon to run this version (systemctl --user restart hostlink.service, or stop and start hostlink serve)")
	}
}

func (e *env) daemonStatus(ctx context.Context) (*apitype.Status, string, error) {
	addr, err := ipc.Address(e.dirs.Runtime)
	if err != nil {
		return nil, "", err
	}
	ctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	cl, err := ipc.Connect(ctx, addr)
	if err != nil {
		return nil, addr, err
	}
	defer cl.Close()
	res, err := cl.Call(ctx, apitype.MethodStatus, nil)
	if err != nil {
		return nil, addr, err
	}
	var st apitype.Status
	if err := json.Unmarshal(res, &st); err != nil {
		return nil, addr, err
	}
	return &st, addr, nil
}

// desktopFixes say how to make computer use ready, by reason.
var desktopFixes = map[string]string{
	"permission_pending":     "System Settings > Privacy & Security: allow hostlink under Accessibility and Screen Recording (launchd restarts it after the grant)",
	"wayland":                "give hostlink the session's WAYLAND_DISPLAY (systemctl --user import-environment WAYLAND_DISPLAY DBUS_SESSION_BUS_ADDRESS), or log in with an X11 session",
	"no_session_bus":         "run hostlink inside the graphical session, with its DBUS_SESSION_BUS_ADDRESS",
	"portal_missing":         "install xdg-desktop-portal and your desktop's backend (xdg-desktop-portal-gnome or -kde); see the wayland checks below",
	"screencast_unavailable": "your desktop's portal backend lacks ScreenCast; install xdg-desktop-portal-gnome or -kde (wlroots: xdg-desktop-portal-wlr, which needs a GPU)",
	"gstreamer_missing":      "install GStreamer: gstreamer1.0-tools gstreamer1.0-plugins-base gstreamer1.0-plugins-good (Debian/Ubuntu)",
	"pipewiresrc_missing":    "install GStreamer's PipeWire plugin: gstreamer1.0-pipewire (Debian/Ubuntu), pipewire-gstreamer (Fedora)",
	"pipewire_tools_missing": "install pw-dump: pipewire-bin (Debian/Ubuntu), pipewire-utils (Fedora)",
	"permission_denied":      "the person declined screen sharing in the desktop's dialog; restart hostlink to be asked again",
	"no_display":             "run hostlink inside a graphical session (DISPLAY set)",
	"x11_unreachable":        "check DISPLAY and that the X server accepts this user (xhost)",
	"wsl2":                   "computer use is not available under WSL2; run hostlink on the Windows host",
	"no_interactive_desktop": "run hostlink in the logged-in user's session, not as a service",
	"session_locked":         "unlock the session",
}

// checkCapabilities reports command execution, computer use (probed here)
// and whatever else the running daemon reports (agent runtimes).
func (e *env) checkCapabilities(ctx context.Context) {
	if e.cfg.Commands.Enabled {
		e.add("commands", OK, "enabled ([commands] enabled = true)", "")
	} else {
		e.add("commands", OK, "off (enable with [commands] enabled = true or serve --enable-shell)", "")
	}
	e.checkSandbox()
	if !e.cfg.Computer.Enabled {
		e.add("computer use", OK, "off (enable with [computer] enabled = true)", "")
	} else {
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		ok, why := desktop.Ready(cctx)
		cancel()
		if ok {
			e.add("computer use", OK, "a desktop is ready", "")
		} else {
			fix := desktopFixes[why]
			if fix == "" {
				fix = "see `hostlink status` for the reason"
			}
			e.add("computer use", Warn, "not ready: "+why, fix)
		}
		e.checkWayland(ctx)
	}
	if e.status == nil {
		return
	}
	for _, c := range e.status.Capabilities {
		// Checked above, or by checkAgents: each concern is reported once.
		if c.Name == "computer_use" || c.Name == "shell" || c.Name == "files" || c.Name == "agents" {
			continue
		}
		if c.Ready {
			e.add("capability "+c.Name, OK, "ready (running daemon)", "")
		} else {
			e.add("capability "+c.Name, Warn, "not ready: "+c.Reason, "the reason names what enables it; `hostlink status` shows every capability")
		}
	}
}

// checkAutostart reports whether the login unit is installed.
func (e *env) checkAutostart() {
	s, err := autostart.ForThisUser(e.dirs, nil)
	if err != nil {
		e.add("autostart", Warn, err.Error(), "")
		return
	}
	present, _, err := autostart.Installed(s)
	switch {
	case err != nil:
		e.add("autostart", Warn, err.Error(), "hostlink uninstall && hostlink install")
	case !present:
		e.add("autostart", Warn, "no "+string(s.Kind)+" unit at "+s.Path(), "hostlink install, then run the command it prints")
	default:
		e.add("autostart", OK, string(s.Kind)+" unit "+s.Path(), "")
	}
}
