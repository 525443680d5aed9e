package companion

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/desktop/native"
	"github.com/hostlink/hostlink/internal/desktop/x11"
	"github.com/hostlink/hostlink/internal/desktop/xvfbtest"
	"github.com/hostlink/hostlink/internal/ops/opstest"
	"github.com/hostlink/hostlink/internal/tstest"
)

// openX11 is a companion's Open for the X display name, its backend
// wrapped by wrap when wrap is not nil.
func openX11(t *testing.T, name string, wrap func(native.Backend) native.Backend) func(context.Context) ([]native.Backend, native.Readiness) {
	return func(context.Context) ([]native.Backend, native.Readiness) {
		b, err := x11.Open(name)
		if err != nil {
			t.Error(err)
			return nil, native.Readiness{Reason: "x11_unreachable"}
		}
		if wrap != nil {
			return []native.Backend{wrap(b)}, native.Readiness{Ready: true}
		}
		return []native.Backend{b}, native.Readiness{Ready: true}
	}
}

// TestDesktopThroughCompanion: the runtime has no display; the companion
// reaches an Xvfb. computer_desktops lists the companion's desktop under
// its own id; observe and act go through the companion, with the image
// fetched in verified chunks and erased on the companion afterwards; the
// desktop goes away when the companion disconnects.
func TestDesktopThroughCompanion(t *testing.T) {
	x := xvfbtest.Start(t, 640, 480)
	r := newRig(t, true)
	o := HostOptions{Credential: r.pair(), Open: openX11(t, x.Name, nil)}
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

// heldList is a desktop whose Space, which the companion reads only to
// answer the runtime's desktop list, waits until release is closed.
type heldList struct {
	native.Backend
	listing chan<- struct{}
	release <-chan struct{}
}

func (h heldList) Space() string {
	select {
	case h.listing <- struct{}{}:
	default:
	}
	<-h.release
	return h.Backend.Space()
}

// TestCompanionListedWithItsDesktops: a companion is listed as connected
// (Sessions, companion_status, the choice of a companion for a call) only
// once its desktops are attached, so whoever sees it connected finds them.
func TestCompanionListedWithItsDesktops(t *testing.T) {
	x := xvfbtest.Start(t, 320, 240)
	r := newRig(t, true)
	listing, release := make(chan struct{}, 1), make(chan struct{})
	o := HostOptions{Credential: r.pair(), Runtime: r.addr, Open: openX11(t, x.Name, func(b native.Backend) native.Backend {
		return heldList{b, listing, release}
	})}
	ctx, cancel := context.WithCancel(context.Background())
	finished := make(chan struct{})
	go func() { Run(ctx, o); close(finished) }()
	t.Cleanup(func() { cancel(); <-finished })
	var once sync.Once
	unhold := func() { once.Do(func() { close(release) }) }
	t.Cleanup(unhold) // first: a failed test must not leave the list held
	<-listing         // connected and verified; the runtime is asking for its desktops
	if s := r.rt.Sessions(); len(s) != 0 {
		t.Fatalf("listed before its desktops are attached: %v", s)
	}
	if c := r.rt.Connections(); len(c) != 0 {
		t.Fatalf("connections before its desktops are attached: %v", c)
	}
	unhold()
	tstest.WaitFor(t, 10*time.Second, "the companion to be listed", func() bool { return len(r.rt.Sessions()) == 1 })
	m, code := opstest.Call(ctx, r.reg, "computer_desktops", map[string]any{})
	if code != "" {
		t.Fatal(code)
	}
	if ds := m["desktops"].([]any); len(ds) != 1 {
		t.Fatalf("listed, but its desktops are not: %v", m)
	}
}
