package ops

import "github.com/hostlink/hostlink/internal/opsapi"

// Bounds are limits a transport negotiated for one connection (see
// opsapi.Bounds, where request types in types-only packages find them).
type Bounds = opsapi.Bounds

// Bounded is implemented, on the pointer, by requests that carry or ask
// for content or time a connection's Bounds limit. Bound refuses a
// request that carries or asks for more (FILE_TOO_LARGE through
// opsapi.ContentTooLarge) and narrows an open-ended one: a read of a
// whole file reads at most one byte past MaxContentBytes, which is enough
// to tell that it is too large without reading the rest.
type Bounded interface {
	Bound(Bounds) error
}

// ContentResult is implemented by results that carry content whose size
// Bounds.MaxContentBytes limits (images are counted through ImageResult).
type ContentResult interface {
	ContentBytes() int64
}

// checkResultBounds refuses a result carrying more content than b allows.
func checkResultBounds(out any, b Bounds) error {
	if b.MaxContentBytes <= 0 {
		return nil
	}
	if r, ok := out.(ContentResult); ok {
		if n := r.ContentBytes(); n > b.MaxContentBytes {
			return opsapi.ContentTooLarge(n, b.MaxContentBytes)
		}
	}
	for _, im := range ImagesOf(out) {
		if n := int64(len(im.Data)); n > b.MaxContentBytes {
			return opsapi.ContentTooLarge(n, b.MaxContentBytes)
		}
	}
	return nil
}
