package x11

import (
	"context"
	"fmt"

	"github.com/jezek/xgb/randr"
	"github.com/jezek/xgb/xinerama"

	"github.com/hostlink/hostlink/internal/desktop/native"
)

// Monitors lists the RandR 1.5 monitors (which include those defined with
// `xrandr --setmonitor`), else Xinerama's heads, else the whole screen.
// X11 draws in device pixels, so every scale is 1.
func (b *Backend) Monitors(ctx context.Context) ([]native.Monitor, error) {
	if b.hasRandR15 {
		r, err := randr.GetMonitors(b.conn, b.root, true).Reply()
		if err == nil && len(r.Monitors) > 0 {
			return b.randrMonitors(r.Monitors), nil
		}
	}
	if b.hasXinerama {
		r, err := xinerama.QueryScreens(b.conn).Reply()
		if err == nil && len(r.ScreenInfo) > 0 {
			out := make([]native.Monitor, 0, len(r.ScreenInfo))
			for i, s := range r.ScreenInfo {
				out = append(out, native.Monitor{
					Index: i, Name: fmt.Sprintf("xinerama-%d", i), Primary: i == 0,
					Bounds: native.Rect{X: int(s.XOrg), Y: int(s.YOrg), W: int(s.Width), H: int(s.Height)},
					Scale:  1,
				})
			}
			return out, nil
		}
	}
	return []native.Monitor{{
		Index: 0, Name: "screen", Primary: true,
		Bounds: native.Rect{W: int(b.screen.WidthInPixels), H: int(b.screen.HeightInPixels)},
		Scale:  1,
	}}, nil
}

// randrMonitors converts RandR's monitors. An automatic monitor (one per
// active output) that monitors defined with --setmonitor entirely cover is
// left out: the user split that output into the monitors they defined.
func (b *Backend) randrMonitors(ms []randr.MonitorInfo) []native.Monitor {
	rect := func(m randr.MonitorInfo) native.Rect {
		return native.Rect{X: int(m.X), Y: int(m.Y), W: int(m.Width), H: int(m.Height)}
	}
	var defined []native.Rect
	for _, m := range ms {
		if !m.Automatic {
			defined = append(defined, rect(m))
		}
	}
	var out []native.Monitor
	for _, m := range ms {
		r := rect(m)
		if m.Automatic && covered(r, defined) {
			continue
		}
		out = append(out, native.Monitor{Index: len(out), Name: b.atomName(m.Name), Primary: m.Primary, Bounds: r, Scale: 1})
	}
	return out
}

// covered reports whether the rectangles in by cover every pixel of r.
func covered(r native.Rect, by []native.Rect) bool {
	area := 0
	for i, a := range by {
		in := a.Intersect(r)
		area += in.W * in.H
		// Subtract overlaps with earlier rectangles (pairwise; monitors
		// rarely overlap more than two deep).
		for _, p := range by[:i] {
			o := in.Intersect(p)
			area -= o.W * o.H
		}
	}
	return area >= r.W*r.H
}
