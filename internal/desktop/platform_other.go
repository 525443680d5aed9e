//go:build !linux && !windows && !darwin

package desktop

import (
	"context"

	"github.com/hostlink/hostlink/internal/desktop/native"
)

func openPlatform(ctx context.Context) ([]native.Backend, native.Readiness) {
	return nil, native.Readiness{Reason: "unsupported_os", Detail: "computer use is not implemented on this OS"}
}
