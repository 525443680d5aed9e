package desktop

import (
	"context"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/desktop/xvfbtest"
)

// TestPlatformReasons: the Linux opener's refusals, before any X11
// connection is tried.
func TestPlatformReasons(t *testing.T) {
	tests := []struct {
		env    map[string]string
		reason string
	}{
		{map[string]string{"WSL_DISTRO_NAME": "Ubuntu", "DISPLAY": ":0"}, "wsl2"},
		{map[string]string{"DISPLAY": "", "XDG_SESSION_TYPE": "wayland"}, "wayland"},
		{map[string]string{"DISPLAY": ""}, "no_display"},
		{map[string]string{"DISPLAY": ":999"}, "x11_unreachable"},
	}
	for _, tt := range tests {
		t.Run(tt.reason, func(t *testing.T) {
			for _, k := range []string{"WSL_DISTRO_NAME", "WSL_INTEROP", "WAYLAND_DISPLAY", "XDG_SESSION_TYPE", "DBUS_SESSION_BUS_ADDRESS"} {
				t.Setenv(k, "")
			}
			for k, v := range tt.env {
				t.Setenv(k, v)
			}
			if isWSL() && tt.reason != "wsl2" {
				t.Skip("running under WSL")
			}
			bs, why := openPlatform(context.Background())
			if len(bs) != 0 || why.Reason != tt.reason || why.Detail == "" {
				t.Fatalf("%v: %d backends, %+v", tt.env, len(bs), why)
			}
			s := New(Options{})
			if ok, reason := s.Ready(context.Background()); ok || reason != tt.reason {
				t.Fatalf("Ready = %v %q", ok, reason)
			}
			if ok, reason := Ready(context.Background()); ok || reason != tt.reason {
				t.Fatalf("package Ready = %v %q", ok, reason)
			}
		})
	}
}

// TestPlatformWaylandWithoutBus: a Wayland session reached without its
// session bus opens the portal backend, which says why it cannot capture.
func TestPlatformWaylandWithoutBus(t *testing.T) {
	for _, k := range []string{"WSL_DISTRO_NAME", "WSL_INTEROP", "DISPLAY", "DBUS_SESSION_BUS_ADDRESS"} {
		t.Setenv(k, "")
	}
	t.Setenv("WAYLAND_DISPLAY", "wayland-0")
	if isWSL() {
		t.Skip("running under WSL")
	}
	bs, why := openPlatform(context.Background())
	if len(bs) != 1 || !why.Ready || bs[0].ID() != "wayland:wayland-0" {
		t.Fatalf("%d backends, %+v", len(bs), why)
	}
	defer bs[0].Close()
	st := bs[0].Status(context.Background())
	if st.Capture.Ready || st.Capture.Reason != "no_session_bus" || st.Input.Reason != "no_session_bus" {
		t.Fatalf("status %+v", st)
	}
	s := New(Options{})
	defer s.Close()
	if ok, reason := s.Ready(context.Background()); ok || reason != "no_session_bus" {
		t.Fatalf("Ready = %v %q", ok, reason)
	}
}

// TestPlatformXWaylandFallback: a Wayland session whose portal route
// cannot capture, but which has an XWayland display, is reached through
// X11, whose readiness says only X11 applications are visible and why the
// portal route is not used.
func TestPlatformXWaylandFallback(t *testing.T) {
	d := xvfbtest.Start(t, 320, 240)
	for _, k := range []string{"WSL_DISTRO_NAME", "WSL_INTEROP", "DBUS_SESSION_BUS_ADDRESS"} {
		t.Setenv(k, "")
	}
	t.Setenv("DISPLAY", d.Name)
	t.Setenv("WAYLAND_DISPLAY", "wayland-0")
	if isWSL() {
		t.Skip("running under WSL")
	}
	bs, why := openPlatform(context.Background())
	if len(bs) != 1 || !why.Ready || bs[0].ID() != "x11:"+d.Name {
		t.Fatalf("%d backends, %+v", len(bs), why)
	}
	defer bs[0].Close()
	st := bs[0].Status(context.Background())
	if !st.Capture.Ready || !strings.Contains(st.Capture.Detail, "XWayland") || !strings.Contains(st.Capture.Detail, "no_session_bus") {
		t.Fatalf("capture %+v", st.Capture)
	}
}
