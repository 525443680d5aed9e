package ops

import (
	"errors"

	"github.com/hostlink/hostlink/internal/errcode"
)

// retryable is an error for a call that was refused before it ran, for a
// reason that may pass: the audit log could not be written, a budget was
// spent, the user has not decided on its approval yet. errcode.As sees
// through it.
type retryable struct{ e *errcode.Error }

func (r retryable) Error() string { return r.e.Error() }
func (r retryable) Unwrap() error { return r.e }

func retry(e *errcode.Error) error { return retryable{e} }

// Retryable reports whether err refused a call before it ran, for a
// reason that may pass, so that sending the identical request again may
// run it: a transport that records first results (the link's idempotency
// store) must not record this one.
func Retryable(err error) bool {
	var r retryable
	return errors.As(err, &r)
}
