package commandapi

import "github.com/hostlink/hostlink/internal/opsapi"

// Bound caps the timeout at the connection's: a request asking for none
// (the configured default) or a longer one runs at most that long.
func (a *RunArgs) Bound(b opsapi.Bounds) error {
	if b.MaxTimeout <= 0 {
		return nil
	}
	if max := b.MaxTimeout.Seconds(); a.TimeoutSeconds == 0 || a.TimeoutSeconds > max {
		a.TimeoutSeconds = max
	}
	return nil
}
