package desktop

import (
	"context"
	"sync"

	"github.com/hostlink/hostlink/internal/desktop/native"
)

// Platform opens this OS's desktops with its native backend. See the
// platform_*.go files.
func Platform(ctx context.Context) ([]native.Backend, native.Readiness) { return openPlatform(ctx) }

var (
	readyMu  sync.Mutex
	readySvc *Service
)

// Ready reports whether computer use can run on this machine now, with a
// reason code when not. The platform link calls it to decide whether to
// advertise computer_use in HELLO. It keeps one connection for later calls.
func Ready(ctx context.Context) (bool, string) {
	readyMu.Lock()
	if readySvc == nil {
		readySvc = New(Options{})
	}
	s := readySvc
	readyMu.Unlock()
	return s.Ready(ctx)
}
