// Package opsapi holds what request and response types need from the
// operation registry (internal/ops) without importing it: the limits a
// connection negotiated (Bounds), the error for content past them, and
// the images a result carries beside its JSON (Image). It is a leaf, so
// that the types-only API packages (internal/*api) can say how their
// requests are bounded and hand their images to the transports.
package opsapi

import (
	"time"

	"github.com/hostlink/hostlink/internal/errcode"
)

// Bounds are limits a transport negotiated for one connection, tighter
// than the operations' own: the platform link's max_file_size_bytes and
// command_timeout_seconds. The registry applies them to every call of
// that connection, so no transport checks sizes or clamps timeouts itself.
// A zero field sets no bound.
type Bounds struct {
	// MaxContentBytes bounds the content one request carries or returns:
	// file bytes, clipboard text, each image.
	MaxContentBytes int64
	// MaxTimeout is the longest a request may run before its operation
	// ends it (commands); a request asking for no timeout or a longer one
	// gets this one.
	MaxTimeout time.Duration
}

// ContentTooLarge is the error for n bytes of content past a connection's
// limit of max.
func ContentTooLarge(n, max int64) error {
	return errcode.New(errcode.FileTooLarge, "%d bytes exceed this connection's limit of %d", n, max).
		With("max_content_bytes", max)
}
