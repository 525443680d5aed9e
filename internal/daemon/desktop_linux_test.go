package daemon

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/hostlink/hostlink/internal/desktop/xvfbtest"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/ops"
)

func openComputerDaemon(t *testing.T, config string) *Daemon {
	t.Helper()
	home := t.TempDir()
	t.Setenv("HOSTLINK_HOME", home)
	cfg := filepath.Join(home, "config.toml")
	if err := os.WriteFile(cfg, []byte(config), 0o600); err != nil {
		t.Fatal(err)
	}
	d, err := Open(Options{ConfigPath: cfg})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { d.Close() })
	return d
}

// TestComputerOffByDefault: without [computer] enabled the operations do
// not exist and the link is told computer use is not ready.
func TestComputerOffByDefault(t *testing.T) {
	d, _ := openTemp(t)
	for _, op := range []string{"computer_desktops", "computer_observe", "computer_act"} {
		if _, ok := d.Registry.Lookup(op); ok {
			t.Errorf("%s is registered although computer control is disabled", op)
		}
	}
	if ok, _ := d.ComputerUse(); ok {
		t.Fatal("computer use reported ready while disabled")
	}
	if c := capability(d, "computer_use"); c.Ready || !strings.Contains(c.Reason, "disabled") {
		t.Fatalf("status %+v", c)
	}
}

func capability(d *Daemon, name string) CapabilityStatus {
	for _, c := range d.Status().Capabilities {
		if c.Name == name {
			return c
		}
	}
	return CapabilityStatus{Name: "missing"}
}

func TestComputerEnabled(t *testing.T) {
	x := xvfbtest.Start(t, 1024, 768)
	t.Setenv("DISPLAY", x.Name)
	t.Setenv("WAYLAND_DISPLAY", "")
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	d := openComputerDaemon(t, "[computer]\nenabled = true\nsettle_ms = 10\n")
	ok, size := d.ComputerUse()
	if !ok || size != [2]int{1024, 768} {
		t.Fatalf("ComputerUse = %v %v", ok, size)
	}
	if c := capability(d, "computer_use"); !c.Ready {
		t.Fatalf("status %+v", c)
	}
	out, err := d.Registry.Call(context.Background(), ops.Caller{Transport: "test"}, "computer_observe", []byte(`{}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	if imgs := ops.ImagesOf(out); len(imgs) != 1 || imgs[0].MIMEType != "image/png" {
		t.Fatalf("images %v", imgs)
	}
}

// TestComputerWaylandOnly: a Wayland session without an X11 display and
// without the session bus its portals need is reported not ready, with the
// reason, and observing is refused.
func TestComputerWaylandOnly(t *testing.T) {
	t.Setenv("DISPLAY", "")
	t.Setenv("WAYLAND_DISPLAY", "wayland-0")
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	d := openComputerDaemon(t, "[computer]\nenabled = true\n")
	if ok, _ := d.ComputerUse(); ok {
		t.Fatal("ready without X11")
	}
	if c := capability(d, "computer_use"); c.Ready || c.Reason != "no_session_bus" {
		t.Fatalf("status %+v", c)
	}
	out, err := d.Registry.Call(context.Background(), ops.Caller{Transport: "test"}, "computer_desktops", []byte(`{}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(out)
	var res struct {
		Desktops []struct {
			ID         string `json:"id"`
			Operations map[string]struct {
				Ready  bool   `json:"ready"`
				Reason string `json:"reason"`
			} `json:"operations"`
		} `json:"desktops"`
	}
	json.Unmarshal(b, &res)
	if len(res.Desktops) != 1 || res.Desktops[0].ID != "wayland:wayland-0" {
		t.Fatalf("desktops %s", b)
	}
	for op, want := range map[string]string{"computer_observe": "no_session_bus", "computer_act": "no_session_bus", "windows": "wayland_no_window_list"} {
		if st := res.Desktops[0].Operations[op]; st.Ready || st.Reason != want {
			t.Errorf("%s readiness %+v, want not ready with %s", op, st, want)
		}
	}
	_, err = d.Registry.Call(context.Background(), ops.Caller{Transport: "test"}, "computer_observe", []byte(`{}`), nil)
	if e := errcode.As(err); e == nil || e.Code != "DESKTOP_UNAVAILABLE" || e.Details["reason"] != "no_session_bus" {
		t.Fatalf("observe: %v", err)
	}
}

// TestComputerXWayland: a Wayland session with an X11 display is usable,
// and says it reaches only X11 applications.
func TestComputerXWayland(t *testing.T) {
	x := xvfbtest.Start(t, 800, 600)
	t.Setenv("DISPLAY", x.Name)
	t.Setenv("WAYLAND_DISPLAY", "wayland-0")
	t.Setenv("DBUS_SESSION_BUS_ADDRESS", "")
	d := openComputerDaemon(t, "[computer]\nenabled = true\n")
	if ok, _ := d.ComputerUse(); !ok {
		t.Fatal("XWayland display not usable")
	}
	out, err := d.Registry.Call(context.Background(), ops.Caller{Transport: "test"}, "computer_desktops", []byte(`{}`), nil)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(out)
	if !strings.Contains(string(b), "only X11 (XWayland) applications") {
		t.Fatalf("desktops %s", b)
	}
}
