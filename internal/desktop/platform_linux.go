package desktop

import (
	"context"
	"os"
	"strings"

	"github.com/hostlink/hostlink/internal/desktop/native"
	"github.com/hostlink/hostlink/internal/desktop/x11"
)

// openPlatform connects to $DISPLAY. WSL2 is refused even with a display
// (WSLg's coordinates are not the Windows desktop the user sees); a
// Wayland session is refused unless an X11 display is also usable.
func openPlatform(ctx context.Context) ([]native.Backend, native.Readiness) {
	if isWSL() {
		return nil, native.Readiness{Reason: "wsl2", Detail: "running under WSL2: no desktop of the Windows host is reachable from here"}
	}
	display := os.Getenv("DISPLAY")
	if display == "" {
		if os.Getenv("WAYLAND_DISPLAY") != "" || os.Getenv("XDG_SESSION_TYPE") == "wayland" {
			return nil, native.Readiness{Reason: "wayland", Detail: "a Wayland session without an X11 display; the portal path is not implemented"}
		}
		return nil, native.Readiness{Reason: "no_display", Detail: "no X11 display ($DISPLAY is not set)"}
	}
	b, err := x11.Open(display)
	if err != nil {
		return nil, native.Readiness{Reason: "x11_unreachable", Detail: "cannot connect to the X11 display " + display}
	}
	if os.Getenv("WAYLAND_DISPLAY") != "" || os.Getenv("XDG_SESSION_TYPE") == "wayland" {
		return []native.Backend{xwayland{b}}, native.Readiness{Ready: true}
	}
	return []native.Backend{b}, native.Readiness{Ready: true}
}

// xwayland is an X11 display inside a Wayland session: usable, but it
// shows and reaches only the X11 applications, which Status says.
type xwayland struct{ *x11.Backend }

const xwaylandNote = "Wayland session: only X11 (XWayland) applications are visible and controllable"

func (x xwayland) Status(ctx context.Context) native.Status {
	st := x.Backend.Status(ctx)
	for _, r := range []*native.Readiness{&st.Capture, &st.Input, &st.Windows} {
		if r.Ready {
			r.Detail = xwaylandNote
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
