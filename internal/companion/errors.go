package companion

import (
	"errors"
	"fmt"

	"github.com/hostlink/hostlink/internal/desktop/native"
	"github.com/hostlink/hostlink/internal/errcode"
)

// nativeErrors names the backend sentinel errors, so that a desktop error
// on the companion maps to the same typed code on the runtime as it would
// natively.
var nativeErrors = map[string]error{
	"unmapped_key":   native.ErrUnmappedKey,
	"unavailable":    native.ErrUnavailable,
	"permission":     native.ErrPermission,
	"window_gone":    native.ErrWindowGone,
	"not_supported":  native.ErrNotSupported,
	"secure_desktop": native.ErrSecureDesktop,
}

// errorHeader fills a response header's error fields from err. Untyped
// errors lose their text (errcode.As), so nothing private crosses.
func errorHeader(h *header, err error) {
	for name, sentinel := range nativeErrors {
		if errors.Is(err, sentinel) {
			h.Native = name
			h.Error = errcode.New(errcode.Internal, "%s", sentinel.Error())
			var e *errcode.Error
			if errors.As(err, &e) {
				h.Error = e
			}
			return
		}
	}
	h.Error = errcode.As(err)
}

// wireError turns a response's error back into an error, wrapping the
// native sentinel it names.
func wireError(h header) error {
	if s, ok := nativeErrors[h.Native]; ok {
		if h.Error.Code == errcode.Internal {
			return fmt.Errorf("companion: %w", s)
		}
		return fmt.Errorf("%w (%w)", h.Error, s)
	}
	return h.Error
}

func itoa(i int) string { return fmt.Sprint(i) }
