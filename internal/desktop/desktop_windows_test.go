package desktop

import (
	"bytes"
	"context"
	"image"
	"image/png"
	"testing"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/desktopapi"
)

// TestWin32Service runs the operations on this Windows session's desktop
// (Wine's, on a private Xvfb, in CI): observe, then move the pointer and
// see the fresh observation report it where asked.
func TestWin32Service(t *testing.T) {
	reg := auditedRegistry(t, t.TempDir())
	s := New(Options{})
	defer s.Close()
	Register(reg, s)
	ctx := context.Background()
	call := func(op string, args map[string]any) any {
		out, err := callOp(ctx, reg, audit.MCPStdio, op, args)
		if err != nil {
			t.Fatalf("%s: %v", op, err)
		}
		return out
	}
	ds := call("computer_desktops", map[string]any{"windows": true}).(desktopapi.DesktopsResult)
	if len(ds.Desktops) != 1 || !ds.Desktops[0].Operations["computer_observe"].Ready {
		t.Fatalf("desktops %+v", ds)
	}
	mon := ds.Desktops[0].Monitors[0]
	obs := call("computer_observe", map[string]any{"monitor": 0, "accessibility": true}).(desktopapi.Observation)
	// UI Automation's answer depends on the foreground window (Wine 8
	// has none for standard controls; see win32's TestUIAStandardControls):
	// either text or a reason, never a failed observation.
	if a := obs.Accessibility; a == nil || (!a.Available && a.Reason == "") {
		t.Fatalf("accessibility %+v", a)
	}
	t.Logf("accessibility %+v", obs.Accessibility)
	img := decodePNGBytes(t, obs.Images[0].Data)
	if img.Bounds().Dx() != mon.Bounds.W || img.Bounds().Dy() != mon.Bounds.H {
		t.Fatalf("image %v for monitor %+v", img.Bounds(), mon)
	}
	res := call("computer_act", map[string]any{"observation_id": obs.ObservationID, "action": "move", "x": 37, "y": 41, "settle_ms": 0}).(desktopapi.ActResult)
	if res.Receipt.Status != desktopapi.Accepted || res.Observation == nil || res.Observation.Cursor == nil ||
		*res.Observation.Cursor != (desktopapi.Point{X: 37, Y: 41}) {
		t.Fatalf("act %+v cursor %+v (%v)", res.Receipt, res.Observation, res.ObservationError)
	}
	if ok, why := s.Ready(ctx); !ok {
		t.Fatalf("Ready: %s", why)
	}
}

func decodePNGBytes(t *testing.T, b []byte) image.Image {
	t.Helper()
	img, err := png.Decode(bytes.NewReader(b))
	if err != nil {
		t.Fatal(err)
	}
	return img
}
