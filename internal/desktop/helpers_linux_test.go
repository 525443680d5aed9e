package desktop

import (
	"context"

	"github.com/hostlink/hostlink/internal/desktop/native"
	"github.com/hostlink/hostlink/internal/desktop/x11"
)

// openX11 is an Options.Open for the X server display; wrap, if set,
// stands between the Service and the X11 backend.
func openX11(display string, wrap func(*x11.Backend) native.Backend) func(context.Context) ([]native.Backend, native.Readiness) {
	return func(context.Context) ([]native.Backend, native.Readiness) {
		b, err := x11.Open(display)
		if err != nil {
			return nil, native.Readiness{Reason: "x11_unreachable"}
		}
		if wrap != nil {
			return []native.Backend{wrap(b)}, native.Readiness{Ready: true}
		}
		return []native.Backend{b}, native.Readiness{Ready: true}
	}
}
