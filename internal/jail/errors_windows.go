package jail

import (
	"errors"

	"golang.org/x/sys/windows"
)

func isNotEmpty(err error) bool { return errors.Is(err, windows.ERROR_DIR_NOT_EMPTY) }

func isInvalidName(err error) bool {
	return errors.Is(err, windows.ERROR_INVALID_NAME) || errors.Is(err, windows.ERROR_BAD_PATHNAME)
}
