package desktop

import (
	"context"
	"os"
	"strings"

	"github.com/hostlink/hostlink/internal/desktop/native"
	"github.com/hostlink/hostlink/internal/desktop/wayland"
	"github.com/hostlink/hostlink/internal/desktop/x11"
)

// openPlatform opens the session's desktop: on Wayland the portal backend,
// on X11 the X server at $DISPLAY. WSL2 is refused even with a display
// (WSLg's coordinates are not the Windows desktop the user sees). A
// Wayland session whose portal route cannot capture (no portal, no
// GStreamer) falls back to its XWayland display, if it has one, which
// shows only X11 applications and says so.
func openPlatform(ctx context.Context) ([]native.Backend, native.Readiness) {
	if isWSL() {
		return nil, native.Readiness{Reason: "wsl2", Detail: "running under WSL2: no desktop of the Windows host is reachable from here"}
	}
	display := os.Getenv("DISPLAY")
	var portalWhy native.Readiness
	if wl := os.Getenv("WAYLAND_DISPLAY"); wl != "" {
		b, err := wayland.Open(ctx, wayland.Config{Display: wl,
			Bus: os.Getenv("DBUS_SESSION_BUS_ADDRESS"), RuntimeDir: os.Getenv("XDG_RUNTIME_DIR")})
		if err == nil {
			portalWhy = b.Status(ctx).Capture
			if portalWhy.Ready || display == "" {
				return []native.Backend{b}, native.Readiness{Ready: true}
			}
			b.Close()
		} else if display == "" {
			return nil, native.Readiness{Reason: "wayland_unreachable", Detail: "cannot reach the Wayland session's bus: " + err.Error()}
		}
	} else if display == "" && os.Getenv("XDG_SESSION_TYPE") == "wayland" {
		return nil, native.Readiness{Reason: "wayland", Detail: "a Wayland session, but WAYLAND_DISPLAY is not set in hostlink's environment"}
	}
	if display == "" {
		return nil, native.Readiness{Reason: "no_display", Detail: "no X11 display ($DISPLAY is not set)"}
	}
	b, err := x11.Open(display)
	if err != nil {
		return nil, native.Readiness{Reason: "x11_unreachable", Detail: "cannot connect to the X11 display " + display}
	}
	if os.Getenv("WAYLAND_DISPLAY") != "" || os.Getenv("XDG_SESSION_TYPE") == "wayland" {
		return []native.Backend{xwayland{b, portalWhy}}, native.Readiness{Ready: true}
	}
	return []native.Backend{b}, native.Readiness{Ready: true}
}

// xwayland is an X11 display inside a Wayland session, used when the
// portal route cannot capture: usable, but it shows and reaches only the
// X11 applications, which Status says, with why the portal route is not
// used.
type xwayland struct {
	*x11.Backend
	portal native.Readiness // why not the portal route ("" reason: no WAYLAND_DISPLAY)
}

const xwaylandNote = "Wayland session: only X11 (XWayland) applications are visible and controllable"

func (x xwayland) Status(ctx context.Context) native.Status {
	st := x.Backend.Status(ctx)
	note := xwaylandNote
	if x.portal.Reason != "" {
		note += "; the portal route is unavailable (" + x.portal.Reason + ": " + x.portal.Detail + ")"
	}
	for _, r := range []*native.Readiness{&st.Capture, &st.Input, &st.Windows} {
		if r.Ready {
			r.Detail = note
		}
	}
	return st
}

// isWSL reports WSL (1 or 2) from the kernel's own description.
func isWSL() bool {
	if os.Getenv("WSL_INTEROP") != "" || os.Getenv("WSL_DISTRO_NAME") != "" {
		return true
	}
	b, err := os.ReadFile("/proc/sys/kernel/osrelease")
	return err == nil && strings.Contains(strings.ToLower(string(b)), "microsoft")
}
