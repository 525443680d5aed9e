package desktop

import (
	"context"

	"github.com/hostlink/hostlink/internal/desktop/native"
	"github.com/hostlink/hostlink/internal/desktop/quartz"
)

// openPlatform opens the console session's desktop. Missing Screen
// Recording or Accessibility grants do not fail here: Status reports them
// as permission_pending per operation.
func openPlatform(ctx context.Context) ([]native.Backend, native.Readiness) {
	b, err := quartz.Open()
	if err != nil {
		return nil, native.Readiness{Reason: "quartz_unavailable", Detail: "the macOS graphics frameworks could not be loaded"}
	}
	return []native.Backend{b}, native.Readiness{Ready: true}
}
