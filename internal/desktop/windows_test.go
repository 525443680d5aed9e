package desktop

import (
	"testing"

	"github.com/hostlink/hostlink/internal/desktop/native"
	"github.com/hostlink/hostlink/internal/desktopapi"
)

func TestWindowIDs(t *testing.T) {
	var ids windowIDs
	w := native.Window{Handle: 5, PID: 10, App: "XTerm", Title: "a"}
	a := ids.mint("link", "x11::1", w)
	w.Title = "renamed"
	if b := ids.mint("link", "x11::1", w); b != a {
		t.Errorf("the same window got a second id: %s %s", a, b)
	}
	reused := w
	reused.PID = 11 // the handle reused by another process
	if c := ids.mint("link", "x11::1", reused); c == a {
		t.Error("a reused handle got the old window's id")
	}
	if _, ok := ids.lookup("mcp-stdio", a); ok {
		t.Error("another transport resolved the id")
	}
	if r, ok := ids.lookup("link", a); !ok || r.w.Title != "renamed" {
		t.Errorf("lookup: %+v %v", r, ok)
	}
	for i := range maxWindowIDs {
		ids.mint("link", "x11::1", native.Window{Handle: uint64(100 + i)})
	}
	if _, ok := ids.lookup("link", a); ok {
		t.Error("the oldest id outlived the bound")
	}
	if len(ids.byID) != maxWindowIDs || len(ids.byKey) != maxWindowIDs {
		t.Errorf("kept %d ids, %d keys", len(ids.byID), len(ids.byKey))
	}
}

func TestListed(t *testing.T) {
	mons := []native.Monitor{{Bounds: native.Rect{W: 100, H: 100}}, {Bounds: native.Rect{X: 100, W: 100, H: 100}}}
	tests := []struct {
		b          native.Rect
		monitor    int
		fullscreen bool
	}{
		{native.Rect{X: 10, Y: 10, W: 20, H: 20}, 0, false},
		{native.Rect{X: 90, Y: 0, W: 60, H: 50}, 1, false},
		{native.Rect{X: 100, W: 100, H: 100}, 1, true},
		{native.Rect{X: -50, Y: 0, W: 60, H: 10}, 0, false},
		{native.Rect{X: 500, Y: 500, W: 10, H: 10}, -1, false},
	}
	for _, tc := range tests {
		lw := listed(native.Window{Bounds: tc.b}, mons)
		if lw.Monitor != tc.monitor || lw.Fullscreen != tc.fullscreen {
			t.Errorf("%v: monitor %d fullscreen %v", tc.b, lw.Monitor, lw.Fullscreen)
		}
	}
}

func TestPermissionState(t *testing.T) {
	ready := native.Readiness{Ready: true}
	pending := native.Readiness{Reason: "permission_pending"}
	tests := []struct {
		goos, name string
		st         native.Status
		reachable  bool
		want       string
	}{
		{"linux", "screen_recording", native.Status{Capture: ready}, true, desktopapi.NotApplicable},
		{"linux", "accessibility", native.Status{}, true, desktopapi.NotApplicable},
		{"linux", "accessibility", native.Status{}, false, desktopapi.PermUnknown},
		{"linux", "input_monitoring", native.Status{}, true, desktopapi.NotApplicable},
		{"darwin", "screen_recording", native.Status{Capture: ready}, true, desktopapi.Granted},
		{"darwin", "accessibility", native.Status{Input: pending}, true, desktopapi.Denied},
		{"darwin", "accessibility", native.Status{Input: native.Readiness{Reason: "x"}}, true, desktopapi.PermUnknown},
		{"darwin", "input_monitoring", native.Status{}, true, desktopapi.PermUnknown},
		{"windows", "camera", native.Status{}, true, desktopapi.PermUnknown},
	}
	for _, tc := range tests {
		if got := permissionState(tc.goos, tc.name, tc.st, tc.reachable); got != tc.want {
			t.Errorf("%s %s: %s, want %s", tc.goos, tc.name, got, tc.want)
		}
	}
}
