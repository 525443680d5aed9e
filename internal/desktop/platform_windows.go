package desktop

import (
	"context"

	"github.com/hostlink/hostlink/internal/desktop/native"
	"github.com/hostlink/hostlink/internal/desktop/win32"
)

// openPlatform opens the session's interactive desktop; a service in
// session 0 has none.
func openPlatform(ctx context.Context) ([]native.Backend, native.Readiness) {
	b, err := win32.Open()
	if err != nil {
		return nil, native.Readiness{Reason: "no_interactive_desktop", Detail: "no interactive desktop in this session (session 0 or a service)"}
	}
	return []native.Backend{b}, native.Readiness{Ready: true}
}
