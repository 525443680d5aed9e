package doctor

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/desktop/waylandtest"
	"github.com/hostlink/hostlink/internal/tstest"
)

// TestWaylandChecks runs doctor's Wayland checks on private headless GNOME
// sessions: with the portal, GStreamer and pw-dump all is OK and the
// portal's versions are named; without the portal, or with a PATH that
// lacks GStreamer and pw-dump, the checks fail with what to install.
func TestWaylandChecks(t *testing.T) {
	run := func(s *waylandtest.Session) map[string]Check {
		e := &env{o: Options{Getenv: s.Getenv}, r: &Report{}}
		e.checkWayland(context.Background())
		got := map[string]Check{}
		for _, c := range e.r.Checks {
			got[c.Name] = c
		}
		return got
	}
	t.Run("complete", func(t *testing.T) {
		got := run(waylandtest.Start(t, waylandtest.Options{}))
		for _, name := range []string{"wayland portal", "gstreamer", "pipewire tools"} {
			if got[name].Status != OK {
				t.Errorf("%s: %+v", name, got[name])
			}
		}
		if d := got["wayland portal"].Detail; !strings.Contains(d, "RemoteDesktop v") || !strings.Contains(d, "ScreenCast v") {
			t.Errorf("portal versions: %q", d)
		}
	})
	t.Run("no portal", func(t *testing.T) {
		got := run(waylandtest.Start(t, waylandtest.Options{NoPortal: true}))
		if c := got["wayland portal"]; c.Status != Fail || !strings.Contains(c.Fix, "xdg-desktop-portal-gnome") {
			t.Errorf("portal: %+v", c)
		}
	})
	t.Run("no gstreamer", func(t *testing.T) {
		s := waylandtest.Start(t, waylandtest.Options{})
		bin := t.TempDir()
		// A PATH with a shell but neither GStreamer nor pw-dump.
		if err := os.Symlink(tstest.Tool(t, "sh"), filepath.Join(bin, "sh")); err != nil {
			t.Fatal(err)
		}
		t.Setenv("PATH", bin)
		got := run(s)
		if c := got["gstreamer"]; c.Status != Fail || !strings.Contains(c.Detail, "gst-launch-1.0") || !strings.Contains(c.Fix, "gstreamer1.0-pipewire") {
			t.Errorf("gstreamer: %+v", c)
		}
		if c := got["pipewire tools"]; c.Status != Fail || !strings.Contains(c.Fix, "pipewire-bin") {
			t.Errorf("pw-dump: %+v", c)
		}
	})
}
