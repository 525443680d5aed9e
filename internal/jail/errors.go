package jail

import (
	"errors"
	"io/fs"
	"syscall"

	"github.com/hostlink/hostlink/internal/errcode"
)

// escapeText is the text of os.Root's unexported error for a path that
// resolves outside the root. TestEscapeDetection pins it.
const escapeText = "path escapes from parent"

// isEscape reports whether err is os.Root refusing to leave its directory.
func isEscape(err error) bool {
	for e := err; e != nil; e = errors.Unwrap(e) {
		if e.Error() == escapeText {
			return true
		}
	}
	return false
}

// translate maps a file system error on p to a typed error whose message
// names only the root-relative path.
func translate(err error, p Path) error {
	if err == nil {
		return nil
	}
	var ce *errcode.Error
	if errors.As(err, &ce) {
		return ce
	}
	switch {
	case isEscape(err):
		return errcode.New(errcode.PathOutsideRoot, "%q resolves outside the workdir", p.rel)
	case errors.Is(err, fs.ErrNotExist):
		return errcode.New(errcode.PathNotFound, "%q does not exist", p.rel)
	// ENOTEMPTY also counts as fs.ErrExist, so it is tested first.
	case errors.Is(err, syscall.ENOTEMPTY), isNotEmpty(err):
		return errcode.New(errcode.PathNotEmpty, "%q is not empty", p.rel)
	case errors.Is(err, fs.ErrExist):
		return errcode.New(errcode.PathExists, "%q already exists", p.rel)
	case errors.Is(err, syscall.ENOTDIR):
		return errcode.New(errcode.NotADirectory, "a parent of %q is not a directory", p.rel)
	case errors.Is(err, syscall.ELOOP):
		return errcode.New(errcode.PathOutsideRoot, "%q has too many levels of symlinks", p.rel)
	case errors.Is(err, fs.ErrPermission):
		return errcode.New(PermissionDenied, "permission denied on %q", p.rel)
	case isInvalidName(err):
		return errcode.New(errcode.PathInvalidChars, "%q is not a valid name on this OS", p.rel)
	}
	return errcode.New(errcode.Internal, "file system error on %q", p.rel)
}

// PermissionDenied is returned when the OS refuses access to a path inside a
// root (file modes or ACLs).
const PermissionDenied errcode.Code = "PERMISSION_DENIED"
