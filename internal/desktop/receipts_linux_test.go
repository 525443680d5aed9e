package desktop

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/desktop/native"
	"github.com/hostlink/hostlink/internal/desktop/x11"
	"github.com/hostlink/hostlink/internal/desktop/xvfbtest"
	"github.com/hostlink/hostlink/internal/desktopapi"
	"github.com/hostlink/hostlink/internal/errcode"
	"github.com/hostlink/hostlink/internal/tstest"
)

// cutOff is the real X11 backend with its input cut after a number of
// steps, as a lost connection would: the first steps really reach the X
// server, the rest never do.
type cutOff struct {
	*x11.Backend
	after *int
}

var errCut = errors.New("connection lost")

func (c cutOff) Dispatch(ctx context.Context, steps []native.Step) (int, error) {
	n, err := c.Backend.Dispatch(ctx, steps[:min(*c.after, len(steps))])
	if err != nil || n == len(steps) {
		return n, err
	}
	return n, errCut
}

func TestReceipts(t *testing.T) {
	d := xvfbtest.Start(t, 640, 480)
	reg := auditedRegistry(t, t.TempDir())
	after := 0
	s := New(Options{Open: openX11(d.Name, func(b *x11.Backend) native.Backend { return cutOff{b, &after} })})
	defer s.Close()
	Register(reg, s)
	call := func(ctx context.Context, op string, args map[string]any) (any, *errcode.Error) {
		return callOp(ctx, reg, audit.MCPStdio, op, args)
	}
	ctx := context.Background()
	pointer := func() string { return strings.Join(strings.Fields(d.Run("xdotool", "getmouselocation"))[:2], " ") }

	// Cut after the move of a click: partial, 1 of 3 steps, the move landed,
	// and a fresh observation still comes back.
	after = 1
	out, _ := call(ctx, "computer_observe", nil)
	obs := out.(desktopapi.Observation)
	out, e := call(ctx, "computer_act", map[string]any{"observation_id": obs.ObservationID, "action": "click", "x": 70, "y": 80, "settle_ms": 0})
	if e != nil {
		t.Fatal(e)
	}
	res := out.(desktopapi.ActResult)
	if res.Receipt.Status != desktopapi.Partial || res.Receipt.Steps != 3 || res.Receipt.Dispatched != 1 || res.Receipt.Error == nil || res.Observation == nil {
		t.Fatalf("partial: %+v %+v", res.Receipt, res.ObservationError)
	}
	if p := pointer(); p != "x:70 y:80" {
		t.Fatalf("pointer %s after the partial click", p)
	}

	// Cut before anything, by an error that may have come after the server
	// took the input: unknown, not "not dispatched".
	after = 0
	out, _ = call(ctx, "computer_act", map[string]any{"observation_id": res.Observation.ObservationID, "action": "move", "x": 5, "y": 5, "settle_ms": 0})
	res = out.(desktopapi.ActResult)
	if res.Receipt.Status != desktopapi.Unknown || res.Receipt.Dispatched != 0 {
		t.Fatalf("unknown: %+v", res.Receipt)
	}

	// The fresh observation fails (the caller gives up while the act
	// settles, once the move has landed): the receipt stands, with the
	// reason beside it.
	after = 10
	short, cancel := context.WithCancel(ctx)
	defer cancel()
	go func() {
		tstest.Eventually(time.Minute, func() bool {
			out, err := d.Output("xdotool", "getmouselocation")
			return err == nil && strings.HasPrefix(out, "x:9 y:9 ")
		})
		cancel()
	}()
	out, e = call(short, "computer_act", map[string]any{"observation_id": res.Observation.ObservationID, "action": "move", "x": 9, "y": 9, "settle_ms": 5000})
	if e != nil {
		t.Fatal(e)
	}
	res = out.(desktopapi.ActResult)
	if res.Receipt.Status != desktopapi.Accepted || res.Receipt.Dispatched != 1 || res.Observation != nil || res.ObservationError == nil || res.ObservationError.Code != errcode.Cancelled {
		t.Fatalf("failed observation: %+v %+v", res.Receipt, res.ObservationError)
	}
	if p := pointer(); p != "x:9 y:9" {
		t.Fatalf("pointer %s", p)
	}
}
