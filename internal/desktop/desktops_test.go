package desktop

import (
	"context"
	"testing"

	"github.com/hostlink/hostlink/internal/desktop/native"
	"github.com/hostlink/hostlink/internal/desktopapi"
)

// granting is a desktop whose person allows sharing (with input) in the
// middle of a computer_desktops call: whichever of Status and Monitors is
// asked first still sees the dialog, the second sees the shared monitor.
type granting struct {
	idOnly
	calls int
}

func (b *granting) granted() bool { b.calls++; return b.calls > 1 }

func (b *granting) Space() string { return "pixels" }

func (b *granting) Status(context.Context) native.Status {
	st := native.Status{Capture: native.Readiness{Ready: true}, Input: native.Readiness{Ready: true}}
	if !b.granted() {
		p := native.Readiness{Reason: "permission_pending", Detail: "the dialog is open"}
		st.Capture, st.Input = p, p
	}
	return st
}

func (b *granting) Monitors(context.Context) ([]native.Monitor, error) {
	if !b.granted() {
		return nil, native.Refuse(native.ErrPermission, "permission_pending", "the dialog is open")
	}
	return []native.Monitor{{Bounds: native.Rect{W: 640, H: 480}, Scale: 1}}, nil
}

// TestDescribeNeverOlderThanMonitors: a desktop that lists the shared
// monitor never reports, beside it, the readiness from before it was
// shared (an agent that waits for the monitor and then acts must not be
// told the dialog is still open).
func TestDescribeNeverOlderThanMonitors(t *testing.T) {
	b := &granting{idOnly: idOnly{id: "wayland:wayland-9"}}
	s := New(Options{Open: func(context.Context) ([]native.Backend, native.Readiness) {
		return []native.Backend{b}, native.Readiness{Ready: true}
	}})
	defer s.Close()
	ctx := context.Background()
	for range 2 {
		res, err := s.desktops(ctx, nil, desktopapi.DesktopsArgs{})
		if err != nil {
			t.Fatal(err)
		}
		d := res.Desktops[0]
		if act := d.Operations["computer_act"]; len(d.Monitors) > 0 && !act.Ready {
			t.Fatalf("monitors %v beside act readiness %+v from before they were shared", d.Monitors, act)
		}
	}
}
