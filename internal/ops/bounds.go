package ops

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

// Bounded is implemented, on the pointer, by requests that carry or ask
// for content or time a connection's Bounds limit. Bound refuses a
// request that carries or asks for more (FILE_TOO_LARGE through
// ContentTooLarge) and narrows an open-ended one: a read of a whole file
// reads at most one byte past MaxContentBytes, which is enough to tell
// that it is too large without reading the rest.
type Bounded interface {
	Bound(Bounds) error
}

// ContentResult is implemented by results that carry content whose size
// Bounds.MaxContentBytes limits (images are counted through ImageResult).
type ContentResult interface {
	ContentBytes() int64
}

// ContentTooLarge is the error for n bytes of content past a connection's
// limit of max.
func ContentTooLarge(n, max int64) error {
	return errcode.New(errcode.FileTooLarge, "%d bytes exceed this connection's limit of %d", n, max).
		With("max_content_bytes", max)
}

// checkResultBounds refuses a result carrying more content than b allows.
func checkResultBounds(out any, b Bounds) error {
	if b.MaxContentBytes <= 0 {
		return nil
	}
	if r, ok := out.(ContentResult); ok {
		if n := r.ContentBytes(); n > b.MaxContentBytes {
			return ContentTooLarge(n, b.MaxContentBytes)
		}
	}
	for _, im := range ImagesOf(out) {
		if n := int64(len(im.Data)); n > b.MaxContentBytes {
			return ContentTooLarge(n, b.MaxContentBytes)
		}
	}
	return nil
}
