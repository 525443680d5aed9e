package desktop

import (
	"context"
	"sort"

	"github.com/hostlink/hostlink/internal/desktop/native"
	"github.com/hostlink/hostlink/internal/desktopapi"
	"github.com/hostlink/hostlink/internal/ops"
)

func (s *Service) desktops(ctx context.Context, c *ops.Call, a desktopapi.DesktopsArgs) (*desktopapi.DesktopsResult, error) {
	ds, why := s.open(ctx)
	res := &desktopapi.DesktopsResult{Desktops: []desktopapi.Desktop{}}
	if len(ds) == 0 {
		res.Reason = &why
		return res, nil
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i].b.ID() < ds[j].b.ID() })
	for _, d := range ds {
		info, err := s.describe(ctx, d, a.Windows)
		if err != nil {
			return nil, err
		}
		res.Desktops = append(res.Desktops, info)
	}
	return res, nil
}

func (s *Service) describe(ctx context.Context, d *desk, windows bool) (desktopapi.Desktop, error) {
	if err := d.lock(ctx); err != nil {
		return desktopapi.Desktop{}, err
	}
	defer d.unlock()
	info := desktopapi.Desktop{ID: d.b.ID(), CoordinateSpace: d.b.Space(), Monitors: []native.Monitor{}}
	// Monitors before status: a session can be granted (or closed) by the
	// person at any moment, and the readiness reported beside the monitors
	// must be at least as new as they are, never the dialog's state from
	// before the monitor it shows was shared.
	mons, err := d.b.Monitors(ctx)
	st := d.b.Status(ctx)
	switch {
	case err != nil && lost(err):
		s.drop(d, err)
		gone := native.Readiness{Reason: "display_lost", Detail: "the display stopped answering"}
		st = native.Status{Capture: gone, Input: gone, Windows: gone, Accessibility: gone}
	case err != nil:
		// A refusal (no consented session yet): no monitors to show, the
		// status says why.
	default:
		info.Monitors = mons
	}
	info.Operations = operations(st)
	if windows && st.Windows.Ready {
		ws, err := d.b.Windows(ctx)
		if err == nil {
			for _, w := range ws {
				info.Windows = append(info.Windows, windowInfo("", w, w.Bounds))
			}
		}
	}
	return info, nil
}

// operations states per operation (and per act family) whether it can run.
func operations(st native.Status) map[string]native.Readiness {
	act := st.Input
	if !st.Capture.Ready {
		act = st.Capture // an act needs an observation first
	}
	return map[string]native.Readiness{
		"computer_observe": st.Capture,
		"computer_act":     act,
		"focus":            st.Windows,
		"windows":          st.Windows,
		"accessibility":    st.Accessibility,
	}
}

// Ready reports whether this process can offer computer use now, and if
// not, the reason code: the platform link advertises computer_use in HELLO
// only when it is true.
func (s *Service) Ready(ctx context.Context) (bool, string) {
	ds, why := s.open(ctx)
	if len(ds) == 0 {
		return false, why.Reason
	}
	for _, d := range ds {
		if err := d.lock(ctx); err != nil {
			return false, "busy"
		}
		st := d.b.Status(ctx)
		d.unlock()
		if st.Capture.Ready && st.Input.Ready {
			return true, ""
		}
		if !st.Capture.Ready {
			why = st.Capture
		} else {
			why = st.Input
		}
	}
	return false, why.Reason
}

// Screen returns the size of the primary monitor (else the first) of the
// first desktop, in its native units, for the link's HELLO.
func (s *Service) Screen(ctx context.Context) ([2]int, bool) {
	ds, _ := s.open(ctx)
	if len(ds) == 0 {
		return [2]int{}, false
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i].b.ID() < ds[j].b.ID() })
	d := ds[0]
	if err := d.lock(ctx); err != nil {
		return [2]int{}, false
	}
	defer d.unlock()
	mons, err := d.b.Monitors(ctx)
	if err != nil || len(mons) == 0 {
		return [2]int{}, false
	}
	m := mons[0]
	for _, c := range mons {
		if c.Primary {
			m = c
			break
		}
	}
	return [2]int{m.Bounds.W, m.Bounds.H}, true
}
