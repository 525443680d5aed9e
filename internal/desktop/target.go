package desktop

import (
	"fmt"

	"github.com/hostlink/hostlink/internal/audit"
	"github.com/hostlink/hostlink/internal/desktop/native"
)

// ActTarget describes, for the user approving a computer_act, where the act
// would land: the desktop and the window under the image point (or the
// window a focus names, or else the focused one), as the observation saw
// them. It changes nothing and consumes no reference; an unknown or
// expired reference is described as such (the act itself then fails).
func (s *Service) ActTarget(transport audit.Transport, observationID string, x, y *int, windowRef string) (string, error) {
	o, err := s.refs.get(observationID, transport, s.opts.now())
	if err != nil {
		// The act would be refused the same way: refused before asking.
		return "", err
	}
	var w *native.Window
	switch {
	case windowRef != "":
		if nw, ok := o.windows[windowRef]; ok {
			w = &nw
		}
	case x != nil && y != nil:
		nx, ny := o.frame.toNative(*x, *y)
		for _, nw := range o.windows {
			b := nw.Bounds
			if nw.Minimized || nx < b.X || ny < b.Y || nx >= b.X+b.W || ny >= b.Y+b.H {
				continue
			}
			// The focused window is on top; else prefer the smallest.
			if w == nil || nw.Focused || (!w.Focused && nw.Bounds.W*nw.Bounds.H < w.Bounds.W*w.Bounds.H) {
				cp := nw
				w = &cp
			}
		}
	default:
		for _, nw := range o.windows {
			if nw.Focused {
				cp := nw
				w = &cp
			}
		}
	}
	if w == nil {
		return fmt.Sprintf("desktop %s, no observed window there", o.desktop), nil
	}
	app := ""
	if w.App != "" {
		app = " (" + w.App + ")"
	}
	return fmt.Sprintf("desktop %s, window %q%s", o.desktop, w.Title, app), nil
}
