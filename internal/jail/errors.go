package jail

import (
	"errors"
	"io/fs"
	"syscall"

	"github.com/hostlink/hostlink/internal/errcode"
)

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
	case errors.Is(err, errEscape):
		return errcode.New(errcode.PathOutsideRoot, "%q resolves outside the workdir", p.rel)
	case errors.Is(err, errProtected):
		return protectedError(p)
	case errors.Is(err, errGuarded):
		return guardedError(p)
	case errors.Is(err, errHoldsProtected):
		return holdsProtectedError(p)
	case errors.Is(err, errChanged):
		return errcode.New(errcode.Conflict, "%q is no longer the object that was checked", p.rel)
	case errors.Is(err, errTooManySteps):
		return errcode.New(PathTooLong, "%q needs too many steps to resolve", p.rel)
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

// Codes the jail adds.
const (
	// HardlinkRefused: the file has more than one link, so another name of
	// it may lie outside the workdir; a workdir opts in with hardlinks =
	// "allow".
	HardlinkRefused errcode.Code = "HARDLINK_REFUSED"
	// MountCrossing: a recursive delete would enter another file system.
	MountCrossing errcode.Code = "MOUNT_CROSSING"
)

// PermissionDenied is returned when the OS refuses access to a path inside a
// root (file modes or ACLs).
const PermissionDenied errcode.Code = "PERMISSION_DENIED"
