//go:build !linux

package doctor

import "context"

// checkWayland: Wayland sessions exist only on Linux here.
func (e *env) checkWayland(ctx context.Context) {}
