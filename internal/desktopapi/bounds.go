package desktopapi

import (
	"math"

	"github.com/hostlink/hostlink/internal/opsapi"
)

// Bound lowers the most clipboard text a read may return to the
// connection's content bound; the read refuses more (FILE_TOO_LARGE).
func (a *ClipboardReadArgs) Bound(b opsapi.Bounds) error {
	if b.MaxContentBytes <= 0 {
		return nil
	}
	limit := int(min(b.MaxContentBytes, math.MaxInt32))
	if a.MaxBytes == 0 || a.MaxBytes > limit {
		a.MaxBytes = limit
	}
	return nil
}

// Bound refuses clipboard text larger than the connection's content bound.
func (a *ClipboardWriteArgs) Bound(b opsapi.Bounds) error {
	if n := int64(len(a.Content)); b.MaxContentBytes > 0 && n > b.MaxContentBytes {
		return opsapi.ContentTooLarge(n, b.MaxContentBytes)
	}
	return nil
}
