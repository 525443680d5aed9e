package companion

import (
	"context"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/desktop/native"
	"github.com/hostlink/hostlink/internal/desktop/x11"
	"github.com/hostlink/hostlink/internal/desktop/xvfbtest"
	"github.com/hostlink/hostlink/internal/ops/opstest"
)

// TestDesktopThroughCompanion: the runtime has no display; the companion
// reaches an Xvfb. computer_desktops lists the companion's desktop under
// its own id; observe and act go through the companion, with the image
// fetched in verified chunks and erased on the companion afterwards; the
// desktop goes away when the companion disconnects.
func TestDesktopThroughCompanion(t *testing.T) {
	x := xvfbtest.Start(t, 640, 480)
	r := newRig(t, true)
	o := HostOptions{Credential: r.pair(), Open: func(context.Context) ([]native.Backend, native.Readiness) {
		b, err := x11.Open(x.Name)
		if err != nil {
			t.Error(err)
			return nil, native.Readiness{Reason: "x11_unreachable"}
		}
		return []native.Backend{b}, native.Readiness{Ready: true}
	}}
	_, done := r.companion(o)
	ctx := context.Background()
	m, code := opstest.Call(ctx, r.reg, "computer_desktops", map[string]any{})
	if code != "" {
		t.Fatal(code)
	}
	ds := m["desktops"].([]any)
	if len(ds) != 1 {
		t.Fatalf("desktops: %v", m)
	}
	id := ds[0].(map[string]any)["id"].(string)
	if want := "companion:" + r.rt.Sessions()[0].ID + "/x11:" + x.Name; id != want {
		t.Fatalf("desktop id %q, want %q", id, want)
	}
	start := time.Now()
	obs, code := opstest.Call(ctx, r.reg, "computer_observe", map[string]any{"desktop": id})
	if code != "" {
		t.Fatal(code)
	}
	t.Logf("observe through the companion: %v", time.Since(start))
	img := obs["image"].(map[string]any)
	if img["width"].(float64) != 640 || img["height"].(float64) != 480 {
		t.Fatalf("image %v", img)
	}
	act, code := opstest.Call(ctx, r.reg, "computer_act", map[string]any{
		"observation_id": obs["observation_id"], "action": "move", "x": 123, "y": 45})
	if code != "" {
		t.Fatal(code)
	}
	if rc := act["receipt"].(map[string]any); rc["status"] != "accepted" {
		t.Fatalf("act receipt %v", rc)
	}
	if c := act["observation"].(map[string]any)["cursor"].(map[string]any); c["x"].(float64) != 123 || c["y"].(float64) != 45 {
		t.Fatalf("cursor after the move: %v", c)
	}
	r.rt.Close()
	<-done
	m, _ = opstest.Call(ctx, r.reg, "computer_desktops", map[string]any{})
	if len(m["desktops"].([]any)) != 0 {
		t.Fatalf("the companion's desktop outlived its connection: %v", m)
	}
}
