package doctor

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/hostlink/hostlink/internal/desktop/wayland"
)

// checkWayland reports the Wayland route's dependencies when hostlink runs
// in a Wayland session: the desktop portal and its interface versions,
// GStreamer with pipewiresrc, and pw-dump. It opens no portal session, so
// no dialog appears.
func (e *env) checkWayland(ctx context.Context) {
	display := e.o.Getenv("WAYLAND_DISPLAY")
	if display == "" {
		return
	}
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	r := wayland.Probe(ctx, wayland.Config{Display: display, Bus: e.o.Getenv("DBUS_SESSION_BUS_ADDRESS"), RuntimeDir: e.o.Getenv("XDG_RUNTIME_DIR")})
	switch {
	case !r.Bus:
		e.add("wayland portal", Fail, "no session bus (DBUS_SESSION_BUS_ADDRESS is not set in hostlink's environment)",
			"run hostlink inside the graphical session (systemctl --user import-environment DBUS_SESSION_BUS_ADDRESS WAYLAND_DISPLAY)")
	case !r.Portal:
		e.add("wayland portal", Fail, "no xdg-desktop-portal on the session bus", portalFix)
	default:
		var vs []string
		for name, v := range r.Versions {
			vs = append(vs, fmt.Sprintf("%s v%d", name, v))
		}
		sort.Strings(vs)
		detail := "xdg-desktop-portal: " + strings.Join(vs, ", ")
		switch {
		case r.Versions["ScreenCast"] == 0:
			e.add("wayland portal", Fail, detail+"; no ScreenCast, so the screen cannot be captured", portalFix)
		case r.Versions["RemoteDesktop"] == 0:
			e.add("wayland portal", Warn, detail+"; no RemoteDesktop: observe only, no input", portalFix)
		case r.Versions["RemoteDesktop"] < 2:
			e.add("wayland portal", OK, detail+" (RemoteDesktop v1 has no restore token: the person allows sharing once per hostlink run, in the desktop's dialog)", "")
		default:
			e.add("wayland portal", OK, detail, "")
		}
	}
	var missing []string
	for _, p := range []string{"gst-launch-1.0", "gst-inspect-1.0"} {
		if r.Programs[p] == "" {
			missing = append(missing, p)
		}
	}
	for _, el := range []string{"pipewiresrc", "videoconvert", "fdsink"} {
		if len(missing) == 0 && !r.Elements[el] {
			missing = append(missing, "GStreamer element "+el)
		}
	}
	if len(missing) > 0 {
		e.add("gstreamer", Fail, "missing: "+strings.Join(missing, ", "), gstreamerFix)
	} else {
		e.add("gstreamer", OK, "gst-launch-1.0 with pipewiresrc, videoconvert, fdsink", "")
	}
	if r.Programs["pw-dump"] == "" {
		e.add("pipewire tools", Fail, "pw-dump is not installed (hostlink reads the shared stream's PipeWire serial with it)",
			"Debian/Ubuntu: apt install pipewire-bin; Fedora: dnf install pipewire-utils")
	} else {
		e.add("pipewire tools", OK, "pw-dump "+r.Programs["pw-dump"], "")
	}
}

const (
	portalFix = "install the portal and your desktop's backend: Debian/Ubuntu: apt install xdg-desktop-portal xdg-desktop-portal-gnome (or -kde); " +
		"Fedora: dnf install xdg-desktop-portal xdg-desktop-portal-gnome (or -kde)"
	gstreamerFix = "Debian/Ubuntu: apt install gstreamer1.0-tools gstreamer1.0-pipewire gstreamer1.0-plugins-base gstreamer1.0-plugins-good; " +
		"Fedora: dnf install gstreamer1 gstreamer1-plugins-base gstreamer1-plugins-good pipewire-gstreamer"
)
